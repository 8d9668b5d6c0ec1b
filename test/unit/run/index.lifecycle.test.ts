import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/cli/program.ts';
import { exitCodeFor } from '../../../src/errors.ts';
import { lifecycleOptions } from '../../../src/k6/lifecycle.ts';
import { RunnerHttpError } from '../../../src/k6/rest.ts';
import { fakePreflight, runFake } from './support/fakes.ts';

/*
 * setup() and teardown() once, the runners' linger and exec.test.fail(), with a fake backend and a
 * fake clock (k6 cannot be made to fail at a chosen moment, and the timeouts are minutes long).
 * The same paths run with real k6 in test/equivalence/ (setup-teardown, setup-throws,
 * teardown-timeout, test-fail-one-runner, vus-gauge, …).
 */

const setup = runFake;

/** What k6's REST API answers when setup() or teardown() fails (checked with k6 v2.2.0). */
function k6Error(fn: 'setup' | 'teardown', detail: string): RunnerHttpError {
  const body = JSON.stringify({
    errors: [{ status: '500', title: `Error executing ${fn}`, detail }],
  });
  return new RunnerHttpError('POST', `/v1/${fn}`, 500, body);
}

const THROWN = 'Error: setup boom\n\tat setup (file:///tmp/load.js:3:61(8))\n';

describe('setup() once', () => {
  it('runs on runner 0 before the start and gives its data to every other runner', async () => {
    const { backend, run } = setup([{ setup: { data: { token: 'abc' } } }, {}, {}]);
    const result = await run;
    expect(result.verdict).toBe('passed');
    expect(backend.runners.map((r) => r.calls.setup)).toEqual([1, 0, 0]);
    expect(backend.runners.map((r) => r.calls.setSetupData)).toEqual([
      [],
      [{ token: 'abc' }],
      [{ token: 'abc' }],
    ]);
  });

  it('gives no data when setup() returned nothing, and runs nothing with --no-setup', async () => {
    const none = setup([{ setup: undefined }, {}]);
    await none.run;
    expect(none.backend.runners.map((r) => [r.calls.setup, r.calls.setSetupData.length])).toEqual([
      [1, 0],
      [0, 0],
    ]);
    const skipped = setup([{}, {}], { preflight: { ...fakePreflight(), options: { noSetup: true } } });
    await skipped.run;
    expect(skipped.backend.runners.map((r) => r.calls.setup)).toEqual([0, 0]);
  });

  it.each([
    [
      THROWN,
      107,
      'setup() failed (exit 107: script exception): Error: setup boom at setup (file:///tmp/load.js:3:61(8))',
    ],
    [
      'setup() execution timed out after 1 seconds',
      100,
      'setup() failed (exit 100: setup() timed out): setup() execution timed out after 1 seconds',
    ],
  ])(
    'fails the run before any load when setup() fails, with k6 code and a partial result',
    async (detail, code, message) => {
      const { backend, run } = setup([{ setup: k6Error('setup', detail) }, {}]);
      // As `k6 run`: no load, but the summary is written (issue 25: there was no result at all).
      const result = await run;
      expect(result).toMatchObject({
        verdict: 'failed',
        failures: [`runner 0: ${message}`],
        failureKinds: ['runner'],
        k6ExitCode: code,
      });
      expect(exitCodeOf(result, false)).toBe(code);
      expect(backend.runners.map((r) => r.calls.start)).toEqual([0, 0]);
      // Each runner was ended (SIGTERM) so that it wrote its summary: setup()'s requests are in it.
      expect(backend.runners.map((r) => r.calls.terminate)).toEqual([1, 1]);
      expect(result.runners.map((r) => r.requests)).toEqual([100, 100]);
      expect(backend.cleanups).toBe(1);
    },
  );

  it('says setup() and teardown() ran only for a script that has them', async () => {
    const without = setup([{ setup: undefined }, {}], {
      preflight: { ...fakePreflight(), lifecycle: { setup: false, teardown: false } },
    });
    expect((await without.run).verdict).toBe('passed');
    expect(without.log.lines.filter((l) => /setup\(\)|teardown\(\)/.test(l))).toEqual([]);
    const withBoth = setup([{}, {}], {
      preflight: { ...fakePreflight(), lifecycle: { setup: true, teardown: true } },
    });
    await withBoth.run;
    expect(withBoth.log.lines.filter((l) => /(setup|teardown)\(\) ran once/.test(l))).toHaveLength(2);
  });

  it('asks for neither setup() nor teardown() when the sources never name them', async () => {
    const { backend, run } = setup([{}, {}], {
      preflight: { ...fakePreflight(), lifecycleNamed: { setup: false, teardown: false } },
    });
    expect((await run).verdict).toBe('passed');
    expect(backend.runners.map((r) => [r.calls.setup, r.calls.teardown, r.calls.terminate])).toEqual([
      [0, 0, 1],
      [0, 0, 1],
    ]);
  });

  it('reads --no-setup, --no-teardown and the timeouts from the consolidated options', () => {
    expect(lifecycleOptions({})).toEqual({
      noSetup: false,
      noTeardown: false,
      setupTimeoutS: 60,
      teardownTimeoutS: 60,
    });
    expect(
      lifecycleOptions({ noSetup: true, noTeardown: true, setupTimeout: '1m30s', teardownTimeout: '500ms' }),
    ).toEqual({ noSetup: true, noTeardown: true, setupTimeoutS: 90, teardownTimeoutS: 0.5 });
  });
});

describe('teardown() once and the end of the linger', () => {
  it('runs once on runner 0 after every test ended, then ends every runner linger', async () => {
    const { backend, run } = setup([
      { run: { code: 0, afterMs: 1000 } },
      { run: { code: 0, afterMs: 5000 } },
    ]);
    const result = await run;
    expect(result.verdict).toBe('passed');
    expect(backend.runners.map((r) => [r.calls.teardown, r.calls.terminate, r.calls.kill])).toEqual([
      [1, 1, 0],
      [0, 1, 0],
    ]);
    // The first runner lingered (its REST API up) until the last one ended.
    expect(result.runners.map((r) => r.exitCode)).toEqual([0, 0]);
  });

  it("ends the other runners' linger before teardown() runs, and its own runner's after", async () => {
    // Read when runner 0 runs teardown(): how often each runner was terminated by then.
    const atTeardown: number[][] = [];
    const { backend, run } = setup([
      {
        run: { code: 0, afterMs: 1000 },
        get teardown() {
          atTeardown.push(backend.runners.map((r) => r.calls.terminate));
          return undefined;
        },
      },
      { run: { code: 0, afterMs: 2000 } },
      { run: { code: 0, afterMs: 1500 } },
    ]);
    expect((await run).verdict).toBe('passed');
    expect(atTeardown).toEqual([[0, 1, 1]]);
    expect(backend.runners.map((r) => r.calls.terminate)).toEqual([1, 1, 1]);
  });

  it('runs on the next runner when runner 0 is gone', async () => {
    const { backend, run } = setup([{ run: { code: null, signal: 'SIGKILL', crash: true } }, {}]);
    const result = await run;
    // A killed k6 writes no summary: its slice is missing too.
    expect(result.failureKinds).toEqual(['runner', 'incomplete']);
    expect(backend.runners.map((r) => r.calls.teardown)).toEqual([0, 1]);
  });

  it('does not run with --no-teardown', async () => {
    const { backend, run } = setup([{}, {}], {
      preflight: { ...fakePreflight(), options: { noTeardown: true } },
    });
    await run;
    expect(backend.runners.map((r) => r.calls.teardown)).toEqual([0, 0]);
    expect(backend.runners.map((r) => r.calls.terminate)).toEqual([1, 1]);
  });

  it.each([
    ['Error: teardown boom\n\tat teardown (file:///tmp/load.js:5:66(11))\n', 107],
    ['teardown() execution timed out after 1 seconds', 101],
  ])('fails the run with k6 code when teardown() fails, keeping the results', async (detail, code) => {
    const { run } = setup([{ teardown: k6Error('teardown', detail) }, {}]);
    const result = await run;
    expect(result.failureKinds).toEqual(['runner']);
    expect(result.failures[0]).toMatch(new RegExp(`^runner 0: teardown\\(\\) failed \\(exit ${code}: `));
    expect(result.k6ExitCode).toBe(code);
    expect(result.metrics.http_reqs?.values.count).toBe(200);
    expect(exitCodeOf(result, false)).toBe(code);
  });

  it('kills a runner whose linger does not end within the stop timeout', async () => {
    const { backend, run, log } = setup([{}, {}], { stopTimeoutS: 5 });
    // Runner 1 ignores SIGTERM.
    const launched = backend.launch.bind(backend);
    backend.launch = async () => {
      const runners = await launched();
      runners[1]!.terminate = async () => {};
      return runners;
    };
    const result = await run;
    expect(log.lines).toContain('warning: runner 1 did not stop within 5 s; killing it');
    expect(result.runners[1]).toMatchObject({ exitCode: null, exit: 'killed by SIGKILL' });
  });
});

describe('a test that test.abort() or exec.test.fail() ended', () => {
  it('exec.test.fail() lets the other runners run to their end, and the run exits 110', async () => {
    const { backend, run } = setup(
      [{ run: { code: 110, afterMs: 1000 } }, { run: { code: 99, afterMs: 8000 } }],
      { preflight: fakePreflight(10, { http_reqs: ['count<150'] }) },
    );
    const result = await run;
    expect(backend.runners.map((r) => r.calls.stop)).toEqual([0, 0]);
    expect(result.failureKinds).toEqual(['thresholds', 'marked-failed']);
    expect(result.failures[1]).toBe(
      'the test was marked as failed: the script called exec.test.fail() (runner 0)',
    );
    expect(result.runners.map((r) => [r.exitCode, r.ok])).toEqual([
      [110, true],
      [99, true],
    ]);
    // 110 wins over 99, as in k6's cmd/run.go.
    expect(exitCodeOf(result, false)).toBe(110);
  });

  it('stops the others when test.abort() ended one runner test, and still runs teardown() (108)', async () => {
    const { backend, run } = setup([{ run: 'hang' }, { run: { code: 108, afterMs: 2000 } }]);
    const result = await run;
    expect(result.failureKinds).toEqual(['runner']);
    expect(backend.runners.map((r) => r.calls.stop)).toEqual([1, 0]);
    expect(backend.runners.map((r) => r.calls.teardown)).toEqual([1, 0]);
    expect(result.runners.map((r) => r.exitCode)).toEqual([103, 108]);
    expect(exitCodeOf(result, false)).toBe(108);
    expect(exitCodeFor(result.failureKinds!)).toBe(1);
  });

  it('runs teardown() once when test.abort() ended every runner test, as k6 does', async () => {
    const { backend, run } = setup([
      { run: { code: 108, afterMs: 1500 } },
      { run: { code: 108, afterMs: 1500 } },
    ]);
    const result = await run;
    expect(backend.runners.map((r) => [r.calls.stop, r.calls.teardown])).toEqual([
      [0, 1],
      [0, 0],
    ]);
    expect(exitCodeOf(result, false)).toBe(108);
  });
});

describe('the vus gauge', () => {
  /** A runner summary whose vus gauge holds the 0s of its paused wait and of its linger. */
  const withVus = (max: number) =>
    JSON.stringify({
      metrics: { iterations: { count: 1, rate: 1 }, vus: { value: 0, min: 0, max } },
      root_group: { name: '', path: '', groups: {}, checks: {} },
    });

  it("is the sum of the runners' active VUs sampled while the test ran", async () => {
    const { run } = setup([
      { vus: 3, run: { code: 0, afterMs: 2500 }, summary: withVus(3) },
      { vus: 1, run: { code: 0, afterMs: 5500 }, summary: withVus(1) },
    ]);
    const result = await run;
    // Samples every 0.5 s: 3 + 1 until 2.5 s, then 1 (runner 0's test has ended). The summaries'
    // sums would say 0 / 0 / 4.
    expect(result.metrics.vus?.values).toEqual({ value: 1, min: 1, max: 4 });
  });

  it("comes from the runners' own records where each keeps one (Kubernetes), and their end wakes the monitor", async () => {
    const { run } = setup([
      {
        ownRecord: [
          [0, 2],
          [1000, 5],
        ],
        run: { code: 0, afterMs: 2600 },
        summary: withVus(5),
      },
      { ownRecord: [[0, 1]], run: { code: 0, afterMs: 3100 }, summary: withVus(1) },
    ]);
    const result = await run;
    // Periods from the start: 2+1, 5+1 from 1 s, then 1 once runner 0 ended at 2.6 s (its period
    // from 2.5 s still counts it). The status poll saw no count (NaN) and took no sample.
    expect(result.metrics.vus?.values).toEqual({ value: 1, min: 1, max: 6 });
    // The test ended at 3.1 s, seen then: not at the next 0.5 s status poll.
    expect(Date.parse(result.endedAt) - Date.parse(result.startedAt)).toBe(3100);
  });

  it("falls back to the summaries' sums for a test too short to be sampled", async () => {
    const { run } = setup([{ summary: withVus(2) }, { summary: withVus(2) }]);
    const result = await run;
    expect(result.metrics.vus?.values).toEqual({ value: 0, min: 0, max: 4 });
  });
});
