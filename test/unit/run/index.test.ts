import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/cli/program.ts';
import { ConfigurationError, exitCodeFor, RunError } from '../../../src/errors.ts';
import { K6_STATUS } from '../../../src/k6/rest.ts';
import { planRun } from '../../../src/run/plan.ts';
import { waitFor } from '../../support/wait.ts';
import { type FakeRunnerScript, fakePreflight, runFake, summaryJson } from './support/fakes.ts';

/*
 * The orchestration (launch -> barrier -> start -> monitor -> stop -> collect -> result) with a
 * fake backend and a fake clock: k6 processes and Pods cannot be scripted to fail at a chosen
 * moment, and the timeouts are minutes long. The same paths run with real k6 in test/e2e/.
 */

const setup = runFake;

/** Runs the scripts, interrupts the run once every runner started, and returns its result. */
async function interruptedAfterStart(scripts: FakeRunnerScript[]) {
  const controller = new AbortController();
  const { backend, run } = setup(scripts, { signal: controller.signal, graceS: 3600 });
  await waitFor(
    () => backend.runners.length === scripts.length && backend.runners.every((r) => r.calls.start === 1),
    'the start',
  );
  controller.abort();
  return { backend, result: await run };
}

const K6_ERROR = 'time="2026-01-01T00:00:00Z" level=error msg="SyntaxError: Unexpected token at load.js:3"';

describe('a distributed run', () => {
  it('passes when every runner completes, starts them all once and cleans up', async () => {
    const { backend, run } = setup([{}, {}, {}]);
    const result = await run;
    expect(result.verdict).toBe('passed');
    expect(result.failureKinds).toEqual([]);
    expect(exitCodeFor(result.failureKinds!)).toBe(0);
    expect(result.runners.map((r) => [r.ok, r.requests])).toEqual([
      [true, 100],
      [true, 100],
      [true, 100],
    ]);
    expect(result.metrics.http_reqs?.values.count).toBe(300);
    expect(backend.runners.map((r) => r.calls.start)).toEqual([1, 1, 1]);
    expect(backend.cleanups).toBe(1);
  });

  it('fails with exit 99 when crossed thresholds on the aggregate are the only failure', async () => {
    const { run } = setup([{}, {}], { preflight: fakePreflight(10, { http_reqs: ['count<150'] }) });
    const result = await run;
    expect(result.failureKinds).toEqual(['thresholds']);
    expect(result.failures).toEqual(['thresholds crossed on the aggregate: http_reqs count<150']);
    expect(result.thresholdsOk).toBe(false);
    expect(result.runners.every((r) => r.ok)).toBe(true);
    expect(exitCodeFor(result.failureKinds!)).toBe(99);
  });
});

describe('the barrier', () => {
  it('gives up after the start timeout, naming the runner and what it last answered', async () => {
    const { backend, run } = setup([{}, { statuses: ['error'] }], { startTimeoutS: 2 });
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunError);
    expect((error as RunError).kind).toBe('start');
    expect((error as RunError).message).toMatch(
      /^runners not ready after 2 s \(start timeout\): runner 1 \(REST API not answering: connect ECONNREFUSED/,
    );
    expect(backend.runners.map((r) => r.calls.start)).toEqual([0, 0]);
    expect(backend.cleanups).toBe(1);
  });

  it('waits for runners still initialising their VUs', async () => {
    const initialising = [
      K6_STATUS.InitVUs,
      K6_STATUS.InitVUs,
      K6_STATUS.InitDone,
      K6_STATUS.PausedBeforeRun,
    ];
    const { run } = setup([{}, { statuses: ['error', ...initialising] }]);
    expect((await run).verdict).toBe('passed');
  });

  it('refuses a runner that was not paused', async () => {
    const { backend, run } = setup([{}, { statuses: [K6_STATUS.Running] }]);
    await expect(run).rejects.toMatchObject({
      kind: 'start',
      message: 'runner 1 is Running before the start: it was not paused',
    });
    expect(backend.cleanups).toBe(1);
  });

  it.each([
    [104, 'invalid configuration'],
    [107, 'script exception'],
  ])(
    'turns a runner exiting %i before the start into a configuration error (exit 2)',
    async (code, meaning) => {
      const { backend, run } = setup([{}, { exitBeforeStart: { code, logTail: K6_ERROR }, statuses: [1] }]);
      const error = await run.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).message).toBe(
        `runner 1 failed before the start (exit ${code}: ${meaning}): SyntaxError: Unexpected token at load.js:3`,
      );
      expect(exitCodeFor([(error as RunError).kind])).toBe(2);
      expect(backend.runners.map((r) => r.calls.start)).toEqual([0, 0]);
      expect(backend.cleanups).toBe(1);
    },
  );

  it('calls any other exit before the start a start failure (exit 1)', async () => {
    const { run } = setup([{ exitBeforeStart: { code: 109 }, statuses: [1] }]);
    await expect(run).rejects.toMatchObject({
      kind: 'start',
      message: 'runner 0 failed before the start (exit 109: k6 panicked)',
    });
  });

  it('is interrupted before the start (exit 130), and nothing starts', async () => {
    const controller = new AbortController();
    controller.abort();
    const { backend, run } = setup([{}, {}], { signal: controller.signal });
    const error = await run.catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'interrupted' });
    expect(exitCodeFor([(error as RunError).kind])).toBe(130);
    expect(backend.runners.map((r) => r.calls.start)).toEqual([0, 0]);
    expect(backend.cleanups).toBe(1);
  });
});

describe('an interruption as the last runner becomes ready', () => {
  // A SIGHUP that lands while the barrier's last poll is answered: the CLI once ran setup() then,
  // and the cleanup's SIGTERM failed that request after the run had returned (exit 1, a stack trace).
  it.each([
    ['with setup()', false],
    ['with --no-setup', true],
  ])('%s: nothing starts, setup() is not run, exit 130', async (_, noSetup) => {
    const controller = new AbortController();
    const pre = fakePreflight();
    if (noSetup) pre.options.noSetup = true;
    const { backend, run } = setup([{}, { statuses: [1, 4], onReady: () => controller.abort() }], {
      signal: controller.signal,
      preflight: pre,
    });
    const error = await run.catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'interrupted' });
    expect(backend.runners.map((r) => [r.calls.setup, r.calls.start])).toEqual([
      [0, 0],
      [0, 0],
    ]);
    expect(backend.cleanups).toBe(1);
  });
});

describe('the monitor', () => {
  it('names the zone whose runners outlive the deadline, and keeps the other zone', async () => {
    const plan = planRun({
      runners: 1,
      maxVUs: 10,
      zones: [
        { name: 'east', share: 50, runners: 1 },
        { name: 'west', share: 50, runners: 1 },
      ],
    });
    const { run } = setup([{}, { run: 'hang' }], { preflight: fakePreflight(10), graceS: 5, plan });
    const result = await run;
    expect(result.failures).toEqual([
      "deadline exceeded: still running 5 s after the test's totalDuration of 10 s (still testing: runner 1)",
      'zone "west": runner 1 still testing at the deadline (was its cluster reachable?); the other zones\' data is kept',
    ]);
    expect(result.failureKinds).toEqual(['deadline', 'deadline']);
    expect(result.zones!.map((z) => [z.name, z.requests])).toEqual([
      ['east', 100],
      ['west', 100],
    ]);
  });

  it('stops everyone when the test outlives its totalDuration plus the grace', async () => {
    const { backend, run, log } = setup([{ run: 'hang' }, { run: 'hang' }], {
      preflight: fakePreflight(10),
      graceS: 5,
    });
    const result = await run;
    expect(result.failureKinds).toEqual(['deadline']);
    expect(result.failures).toEqual([
      "deadline exceeded: still running 5 s after the test's totalDuration of 10 s (still testing: runner 0, 1)",
    ]);
    expect(backend.runners.map((r) => [r.calls.stop, r.calls.kill])).toEqual([
      [1, 0],
      [1, 0],
    ]);
    // Stopped runners exit 103; that is not their failure.
    expect(result.runners.map((r) => [r.exitCode, r.ok])).toEqual([
      [103, true],
      [103, true],
    ]);
    expect(log.lines).toContain(
      "warning: stopping every runner: deadline exceeded: still running 5 s after the test's totalDuration of 10 s (still testing: runner 0, 1)",
    );
    expect(exitCodeFor(result.failureKinds!)).toBe(1);
  });

  it('kills runners that do not stop within the stop timeout', async () => {
    const { backend, run, log } = setup([{ run: 'hang' }, { run: 'hang', onStop: 'ignore', summary: null }], {
      preflight: fakePreflight(1),
      graceS: 1,
      stopTimeoutS: 7,
    });
    const result = await run;
    expect(backend.runners.map((r) => r.calls.kill)).toEqual([0, 1]);
    expect(log.lines).toContain('warning: runner 1 did not stop within 7 s; killing it');
    expect(result.runners[1]).toMatchObject({ exitCode: null, exit: 'killed by SIGKILL', ok: false });
    expect(result.failureKinds).toEqual(['deadline', 'incomplete']);
  });

  it('names a runner that fails mid-test and stops the others (exit 1)', async () => {
    const { backend, run } = setup([
      { run: 'hang' },
      { run: { code: 108, afterMs: 3000, logTail: K6_ERROR } },
      { run: 'hang' },
    ]);
    const result = await run;
    expect(result.failureKinds).toEqual(['runner']);
    expect(result.failures[0]).toBe(
      'runner 1 failed (exit 108: the script called test.abort()): SyntaxError: Unexpected token at load.js:3',
    );
    expect(result.runners.map((r) => [r.exitCode, r.ok])).toEqual([
      [103, true],
      [108, false],
      [103, true],
    ]);
    expect(result.runners[1]!.logTail).toBe(K6_ERROR);
    expect(backend.runners.map((r) => r.calls.stop)).toEqual([1, 0, 1]);
    expect(exitCodeFor(result.failureKinds!)).toBe(1);
  });

  it('aborts the test for everyone when one slice crosses an abortOnFail threshold', async () => {
    const abortLog =
      'level=error msg="thresholds on metrics \'http_reqs\' were crossed; at least one has abortOnFail enabled, stopping test prematurely"';
    // k6 aborts its test (status 10, Interrupted) and exits 99 once its linger ends.
    const { run } = setup([
      { run: 'hang' },
      { run: { code: 99, afterMs: 2000, logTail: abortLog, endStatus: K6_STATUS.Interrupted } },
    ]);
    const result = await run;
    expect(result.failureKinds).toEqual(['aborted']);
    expect(result.failures).toEqual([
      'test aborted: runner 1 crossed a threshold with abortOnFail on its slice',
    ]);
    // k6 exits 99 after an abortOnFail abort.
    expect(exitCodeOf(result, false)).toBe(99);
  });

  it('is interrupted after the start: stops every runner, runs teardown() as k6 does after Ctrl-C, keeps their results (exit 130)', async () => {
    const { backend, result } = await interruptedAfterStart([{ run: 'hang' }, { run: 'hang' }]);
    expect(result.failureKinds).toEqual(['interrupted']);
    expect(backend.runners.map((r) => [r.calls.stop, r.calls.teardown])).toEqual([
      [1, 1],
      [1, 0],
    ]);
    expect(result.runners.map((r) => [r.exitCode, r.ok, r.requests])).toEqual([
      [103, true, 100],
      [103, true, 100],
    ]);
    expect(exitCodeFor(result.failureKinds!)).toBe(130);
  });

  it('keeps the summary of a runner that is ending when the interruption comes (its API refuses the stop)', async () => {
    const { backend, result } = await interruptedAfterStart([
      { run: 'hang' },
      { run: 'hang', onStop: 'refuse' },
    ]);
    // Not killed (a killed k6 writes no summary): it ends on its own and keeps its summary.
    expect(backend.runners.map((r) => r.calls.kill)).toEqual([0, 0]);
    expect(result.runners.map((r) => r.requests)).toEqual([100, 100]);
    expect(result.metrics.http_reqs?.values.count).toBe(200);
    expect(result.failureKinds).toEqual(['interrupted']);
  });

  it('reports a runner that left no readable summary as missing from the aggregate', async () => {
    const { run } = setup([{}, { summary: '{"not":"a summary"}' }, { summary: summaryJson(50, 5) }]);
    const result = await run;
    expect(result.failureKinds).toEqual(['incomplete']);
    expect(result.failures).toEqual([
      'runner 1\'s summary could not be read: not a k6 summary export: no "metrics" object',
    ]);
    expect(result.metrics.http_reqs?.values.count).toBe(150);
    expect(result.runners.map((r) => r.ok)).toEqual([true, false, true]);
  });

  it('says why a runner left no summary when the backend could not read it', async () => {
    const { run } = setup([{}, { summary: null, unreadable: 'its node n1 is gone' }]);
    const result = await run;
    expect(result.failures).toEqual([
      'runner 1 left no summary (its node n1 is gone); its results are missing from the aggregate',
    ]);
    expect(result.metrics.http_reqs?.values.count).toBe(100);
  });
});

describe('the summary data of the result', () => {
  it('carries each metric threshold as judged on the aggregate (k6 data.metrics[m].thresholds)', async () => {
    const { run } = runFake([{}, {}], { preflight: fakePreflight(10, { http_reqs: ['count>1000'] }) });
    const result = await run;
    expect(result.summary?.metrics.http_reqs?.thresholds).toEqual({ 'count>1000': { ok: false } });
  });
});
