import { describe, expect, it } from 'vitest';
import type { K6LiveMetric } from '../../../src/k6/rest.ts';
import { TimelineSchema } from '../../../src/result/timeline-schema.ts';
import { type RunOptions, runDistributed } from '../../../src/run/index.ts';
import {
  FakeBackend,
  FakeClock,
  type FakeRunnerScript,
  fakePlan,
  fakePreflight,
  recordingLogger,
  summaryJson,
} from './support/fakes.ts';

/*
 * The live progress line and the timeline, through the whole orchestration with the fake backend
 * and the fake clock: a k6 process cannot be made to answer its REST API late on cue, nor its
 * counters be scripted. test/e2e/progress.test.ts runs the same with real k6 and a SIGSTOP.
 */

/** A runner's `/v1/metrics` after `elapsedMs` of a steady load of `rps` requests/s and `vus` VUs. */
function steady(rps: number, vus: number, failedShare = 0) {
  return (elapsedMs: number): K6LiveMetric[] => {
    const count = Math.floor((rps * elapsedMs) / 1000);
    return [
      { name: 'vus', type: 'gauge', contains: 'default', sample: { value: vus } },
      { name: 'http_reqs', type: 'counter', contains: 'default', sample: { count, rate: rps } },
      { name: 'http_req_failed', type: 'rate', contains: 'default', sample: { rate: failedShare } },
      {
        name: 'http_req_duration',
        type: 'trend',
        contains: 'time',
        sample: { avg: 10, med: 9, 'p(90)': 15, 'p(95)': 20 + vus },
      },
    ];
  };
}

function setup(scripts: FakeRunnerScript[], options: Partial<RunOptions> = {}) {
  const clock = new FakeClock();
  const backend = new FakeBackend(scripts, clock);
  const log = recordingLogger();
  const run = runDistributed({
    script: 'load.js',
    preflight: fakePreflight(30),
    plan: fakePlan(scripts.length),
    backend,
    log,
    clock,
    progressIntervalS: 10,
    ...options,
  });
  return { backend, log, run };
}

const progressLines = (lines: string[]) => lines.filter((l) => /^info: t=\d+s /.test(l));

describe('the progress line', () => {
  it('shows real VUs, RPS over the interval, errors and the p95 band, then a last line with nothing stale', async () => {
    const runner = (vus: number): FakeRunnerScript => ({
      run: { code: 0, afterMs: 25_000 },
      metrics: steady(100, vus, 0.02),
      summary: summaryJson(2500, 25),
    });
    const { log, run } = setup([runner(10), runner(20), runner(30)]);
    const result = await run;
    const lines = progressLines(log.lines);
    expect(lines[0]).toBe('info: t=10s runners=3/3 VUs=60 RPS=300 errors=2.00% p95=30.0..50.0ms');
    expect(lines[1]).toBe('info: t=20s runners=3/3 VUs=60 RPS=300 errors=2.00% p95=30.0..50.0ms');
    // After the test: every runner ended, so no VUs; the RPS of the last 5 s comes from the
    // summaries (2,500 requests each), never negative, never the last poll's.
    expect(lines.at(-1)).toMatch(/^info: t=25s ended: runners=0\/3 VUs=0 RPS=300 errors=0\.00%/);
    expect(lines.join('\n')).not.toMatch(/RPS=-|no answer/);
    expect(result.verdict).toBe('passed');
  });

  it('never waits on a runner whose REST API hangs, shows it as not answering, and asks it only once', async () => {
    const { backend, log, run } = setup([
      { run: { code: 0, afterMs: 25_000 }, metrics: steady(100, 10), summary: summaryJson(2500, 25) },
      { run: { code: 0, afterMs: 25_000 }, metrics: () => 'hang', summary: summaryJson(2500, 25) },
    ]);
    await run;
    const lines = progressLines(log.lines);
    // The line is due at t=10 s; the hung runner costs the 2 s poll timeout at most.
    expect(lines[0]).toMatch(
      /^info: t=1[012]s runners=2\/2 VUs=10 RPS=100 errors=0\.00% p95=30\.0ms \(no answer: runner 1\)$/,
    );
    expect(lines[1]).toMatch(/^info: t=2[012]s runners=2\/2 .*\(no answer: runner 1\)$/);
    // One request pending is enough: it is not asked again while that one hangs.
    expect(backend.runners[1]!.calls.metrics).toBe(1);
    expect(backend.runners[0]!.calls.metrics).toBeGreaterThanOrEqual(4);
  });

  it('counts only the runners still running, and no VUs for one that ended', async () => {
    const { log, run } = setup([
      { run: { code: 0, afterMs: 25_000 }, metrics: steady(100, 10), summary: summaryJson(2500, 25) },
      { run: { code: 0, afterMs: 12_000 }, metrics: steady(100, 10), summary: summaryJson(1200, 12) },
    ]);
    await run;
    const lines = progressLines(log.lines);
    expect(lines[0]).toMatch(/^info: t=10s runners=2\/2 VUs=20 RPS=200 /);
    // Runner 1's test ended at 12 s: no VUs of its own any more; it lingers (for teardown()) and
    // still answers with its final counts, so its last 200 requests are in this line (1,200 in 10 s).
    expect(lines[1]).toMatch(/^info: t=20s runners=1\/2 VUs=10 RPS=120 /);
    expect(lines[2]).toMatch(/^info: t=25s ended: runners=0\/2 VUs=0 RPS=100 /);
  });

  it('shows no empty interval when the runners stop answering as the test ends', async () => {
    // k6 answers nothing useful between its last iteration and its exit.
    const ending = (elapsedMs: number) => (elapsedMs >= 15_000 ? [] : steady(100, 10)(elapsedMs));
    const runner: FakeRunnerScript = {
      run: { code: 0, afterMs: 15_500 },
      metrics: ending,
      summary: summaryJson(1550, 15.5),
    };
    const { log, run } = setup([runner, runner], { progressIntervalS: 5 });
    await run;
    const lines = progressLines(log.lines);
    expect(lines.map((l) => l.slice(0, 44))).toEqual([
      'info: t=5s runners=2/2 VUs=20 RPS=200 errors',
      'info: t=10s runners=2/2 VUs=20 RPS=200 error',
      // The 1,100 requests since 10 s over 5.5 s, from the summaries: not 0, then a burst.
      'info: t=16s ended: runners=0/2 VUs=0 RPS=200',
    ]);
  });

  it('says so when no runner answers for a while', async () => {
    const { log, run } = setup([{ run: { code: 0, afterMs: 25_000 }, metrics: () => 'hang' }]);
    await run;
    expect(progressLines(log.lines)[0]).toMatch(
      /^info: t=1[0-2]s runners=1\/1 VUs=0 RPS=0\.0 .*\(no answer: runner 0\)$/,
    );
  });
});

describe('the timeline', () => {
  it('is recorded at the adaptive interval (1 s for a 30 s test) from the polls and kept in the result, adding up to the totals', async () => {
    const runner: FakeRunnerScript = {
      run: { code: 0, afterMs: 22_000 },
      metrics: steady(50, 5, 0.1),
      summary: summaryJson(1100, 22),
    };
    const { run } = setup([runner, runner]);
    const result = await run;
    const timeline = TimelineSchema.parse(result.timeline);
    expect(timeline.intervalS).toBe(1);
    expect(timeline.points.map((p) => p.tS)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    for (const p of timeline.points.slice(0, 21)) expect([p.rps, p.vus, p.errorRate]).toEqual([100, 10, 0.1]);
    expect(timeline.points[0]).toMatchObject({ p95MinMs: 25, p95MaxMs: 25, runners: 2 });
    // The last interval: both runners ended (VUs 0), its requests from the summaries.
    expect(timeline.points[21]).toMatchObject({ intervalS: 1, requests: 100, rps: 100, vus: 0 });
    expect(timeline.points.reduce((a, p) => a + p.requests, 0)).toBe(result.metrics.http_reqs?.values.count);
  });
});
