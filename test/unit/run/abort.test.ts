import { describe, expect, it } from 'vitest';
import type { Runner } from '../../../src/backends/backend.ts';
import { exitCodeFor } from '../../../src/errors.ts';
import type { K6LiveMetric } from '../../../src/k6/rest.ts';
import { parseThresholds } from '../../../src/k6/thresholds-parser.ts';
import { crossedAbortThreshold, delaySeconds, GlobalAbort } from '../../../src/run/abort.ts';
import { FakeClock } from './support/fakes.ts';

// abortOnFail on the live global aggregate: the `/v1/metrics` answers below have the shape k6
// v2.2.0 gives (checked by hand: trends carry avg/min/med/max/p(90)/p(95) only, rates `rate` only,
// submetrics under their threshold key, `tainted` per metric).

const abort = (metric: string, threshold: string, extra: Record<string, unknown> = {}) =>
  parseThresholds({ [metric]: [{ threshold, abortOnFail: true, ...extra }] });

const trend = (name: string, sample: Record<string, number>, tainted = false): K6LiveMetric => ({
  name,
  type: 'trend',
  contains: 'time',
  sample,
  ...(tainted ? { tainted: true } : {}),
});
const rate = (name: string, r: number): K6LiveMetric => ({
  name,
  type: 'rate',
  contains: 'default',
  sample: { rate: r },
});
const counter = (name: string, count: number): K6LiveMetric => ({
  name,
  type: 'counter',
  contains: 'default',
  sample: { count, rate: 0 },
});

describe('abortOnFail on the whole test', () => {
  it("does not abort when one runner's slice crosses a rate but the whole test may not", () => {
    // Runner 0 fails everything, runners 1-3 nothing: the global rate lies in [0, 1].
    const live = [[rate('http_req_failed', 1)], [rate('http_req_failed', 0)], [rate('http_req_failed', 0)]];
    expect(crossedAbortThreshold(abort('http_req_failed', 'rate<0.3'), live, 4)).toBeUndefined();
  });

  it('aborts when every runner is past the limit: the mixture certainly is', () => {
    const live = [[rate('http_req_failed', 0.9)], [rate('http_req_failed', 0.6)]];
    const crossed = crossedAbortThreshold(abort('http_req_failed', 'rate<0.5'), live, 2);
    expect(crossed?.threshold.source).toBe('rate<0.5');
    expect(crossed?.seen).toBe('rate between 0.6 and 0.9');
  });

  it('sums counters exactly across runners', () => {
    const live = [[counter('errors', 6)], [counter('errors', 5)]];
    expect(crossedAbortThreshold(abort('errors', 'count<=10'), live, 2)?.seen).toBe('count 11');
    expect(crossedAbortThreshold(abort('errors', 'count<=11'), live, 2)).toBeUndefined();
  });

  it('judges a counter rate over the time since the start', () => {
    const live = [[counter('errors', 30)], [counter('errors', 30)]];
    expect(crossedAbortThreshold(abort('errors', 'rate<20'), live, 2)).toBeDefined(); // 30/s
    expect(crossedAbortThreshold(abort('errors', 'rate<20'), live, 4)).toBeUndefined(); // 15/s
  });

  it('takes trend min and max exactly, and p(95) only when every runner is past it', () => {
    const live = [
      [trend('http_req_duration', { min: 5, max: 900, avg: 100, med: 50, 'p(90)': 300, 'p(95)': 700 })],
      [trend('http_req_duration', { min: 1, max: 20, avg: 10, med: 9, 'p(90)': 15, 'p(95)': 18 })],
    ];
    expect(crossedAbortThreshold(abort('http_req_duration', 'max<800'), live, 2)).toBeDefined();
    expect(crossedAbortThreshold(abort('http_req_duration', 'min>2'), live, 2)).toBeDefined();
    // One runner's p95 is 700, the other's 18: the global p95 is somewhere between.
    expect(crossedAbortThreshold(abort('http_req_duration', 'p(95)<500'), live, 2)).toBeUndefined();
    expect(crossedAbortThreshold(abort('http_req_duration', 'p(95)<15'), live, 2)).toBeDefined();
    expect(crossedAbortThreshold(abort('http_req_duration', 'avg>200'), live, 2)).toBeDefined();
  });

  it('aborts on a percentile /v1/metrics lacks only when every runner has the metric tainted by that one threshold', () => {
    const live = (t0: boolean, t1: boolean) => [
      [trend('http_req_duration', { min: 1, max: 9 }, t0)],
      [trend('http_req_duration', { min: 1, max: 9 }, t1)],
    ];
    const p99 = abort('http_req_duration', 'p(99)<5');
    expect(crossedAbortThreshold(p99, live(true, false), 2)).toBeUndefined();
    expect(crossedAbortThreshold(p99, live(true, true), 2)?.seen).toBe('p(99) crossed on every runner');
    // With a second threshold on the metric, tainted does not say which one crossed.
    const two = parseThresholds({
      http_req_duration: [{ threshold: 'p(99)<5', abortOnFail: true }, 'avg<1'],
    });
    expect(crossedAbortThreshold(two, live(true, true), 2)).toBeUndefined();
  });

  it('waits for delayAbortEval and finds a submetric however its key is spelt', () => {
    const thresholds = abort("http_req_failed{ name : 'api' }", 'rate<0.1', { delayAbortEval: '5s' });
    const live = [[rate('http_req_failed{name : api}', 1)], [rate('http_req_failed{name : api}', 1)]];
    expect(crossedAbortThreshold(thresholds, live, 4)).toBeUndefined();
    expect(crossedAbortThreshold(thresholds, live, 5)).toBeDefined();
  });

  it('reads delayAbortEval as k6 reads a duration', () => {
    expect(delaySeconds('1m30s')).toBe(90);
    expect(delaySeconds('1d2h')).toBe(93_600);
    expect(delaySeconds('1500')).toBe(1.5);
    expect(delaySeconds('soon')).toBe(Number.POSITIVE_INFINITY);
  });

  it('leaves out runners without samples and ignores thresholds without abortOnFail', () => {
    const live = [[rate('http_req_failed', 1)], []];
    expect(crossedAbortThreshold(abort('http_req_failed', 'rate<0.5'), live, 2)).toBeDefined();
    expect(
      crossedAbortThreshold(parseThresholds({ http_req_failed: ['rate<0.5'] }), live, 2),
    ).toBeUndefined();
  });
});

describe('the monitor hook', () => {
  /** Runners that answer `/v1/metrics` with `answers[i]` (only what GlobalAbort uses of a Runner). */
  const runners = (answers: K6LiveMetric[][]) =>
    answers.map((metrics, index) => ({
      index,
      api: {
        metrics: async () => metrics,
      },
    })) as unknown as Runner[];

  it('polls every 2 s from the start and stops with a thresholds failure (exit 99, as k6)', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const live = [[rate('http_req_failed', 1)], [rate('http_req_failed', 0.8)]];
    const hook = new GlobalAbort(abort('http_req_failed', 'rate<0.5'), runners(live), start, clock);
    expect(await hook.check(new Set([0, 1]))).toBeUndefined(); // t=0: not due
    await clock.sleep(2000);
    const failure = await hook.check(new Set([0, 1]));
    expect(failure?.kind).toBe('thresholds');
    expect(failure?.message).toMatch(
      /^test aborted after 2\.0 s: threshold http_req_failed rate<0\.5 with abortOnFail crossed on the whole test \(rate between 0\.8 and 1\)/,
    );
    expect(exitCodeFor([failure!.kind])).toBe(99);
  });

  it('keeps an ended runner last answer in the bounds', async () => {
    const clock = new FakeClock();
    const answers = [[rate('http_req_failed', 0)], [rate('http_req_failed', 1)]];
    const hook = new GlobalAbort(abort('http_req_failed', 'rate<0.5'), runners(answers), clock.now(), clock);
    await clock.sleep(2000);
    expect(await hook.check(new Set([0, 1]))).toBeUndefined();
    // Runner 0 ended (not polled any more): its last 0 still bounds the global rate from below.
    await clock.sleep(2000);
    expect(await hook.check(new Set([1]))).toBeUndefined();
  });

  it('never polls without an abortOnFail threshold', async () => {
    const clock = new FakeClock();
    let polled = 0;
    const metrics = async () => {
      polled++;
      return [];
    };
    const runner = { index: 0, api: { metrics } } as unknown as Runner;
    const hook = new GlobalAbort(parseThresholds({ iterations: ['count>0'] }), [runner], clock.now(), clock);
    await clock.sleep(5000);
    expect(await hook.check(new Set([0]))).toBeUndefined();
    expect(polled).toBe(0);
  });
});
