import { describe, expect, it } from 'vitest';
import { parseRunnerSummary } from '../../../src/k6/summary.ts';
import { bandedTrends, evaluateThresholds } from '../../../src/k6/thresholds.ts';
import { parseThresholds } from '../../../src/k6/thresholds-parser.ts';
import { aggregateSummaries, mergeGroups } from '../../../src/result/aggregate.ts';
import { QUANTILE_GRID } from '../../../src/result/quantile-grid.ts';

/** A runner summary in the shape `k6 run --summary-export` writes (legacy machine-readable summary). */
function exportJson(opts: {
  requests: number;
  durationS: number;
  latencies: number[];
  failed: number;
  vus: number;
}) {
  const sorted = [...opts.latencies].sort((a, b) => a - b);
  const pct = (p: number) => {
    const i = (p / 100) * (sorted.length - 1);
    const lo = sorted[Math.floor(i)]!;
    return lo + (sorted[Math.ceil(i)]! - lo) * (i - Math.floor(i));
  };
  const trend: Record<string, number> = {
    count: sorted.length,
    min: sorted[0]!,
    max: sorted.at(-1)!,
    avg: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    med: pct(50),
  };
  for (const p of QUANTILE_GRID) trend[`p(${p})`] = pct(p);
  return JSON.stringify({
    root_group: {
      name: '',
      path: '',
      id: 'x',
      groups: {
        login: {
          name: 'login',
          path: '::login',
          id: 'y',
          groups: {},
          checks: {
            ok: {
              name: 'ok',
              path: '::login::ok',
              id: 'z',
              passes: opts.requests - opts.failed,
              fails: opts.failed,
            },
          },
        },
      },
      checks: {},
    },
    metrics: {
      http_reqs: { count: opts.requests, rate: opts.requests / opts.durationS },
      'http_reqs{scenario:api}': { count: opts.requests, rate: opts.requests / opts.durationS },
      http_req_failed: {
        passes: opts.failed,
        fails: opts.requests - opts.failed,
        value: opts.failed / opts.requests,
      },
      http_req_duration: { ...trend, thresholds: { 'p(95)<1': true } },
      vus: { value: opts.vus, min: 0, max: opts.vus },
      my_gauge: { value: opts.vus * 10, min: 1, max: opts.vus * 10 },
    },
  });
}

describe('aggregation of runner summaries', () => {
  const a = parseRunnerSummary(
    exportJson({ requests: 100, durationS: 10, latencies: [1, 2, 3, 4], failed: 1, vus: 5 }),
  );
  const b = parseRunnerSummary(
    exportJson({ requests: 300, durationS: 10, latencies: [10, 20], failed: 3, vus: 7 }),
  );
  const metrics = aggregateSummaries([a, b], { durationS: 10.5, percentiles: [97.5] });

  it('tells metric types from the export shape and reads each runner duration', () => {
    expect(a.metrics.http_reqs?.type).toBe('counter');
    expect(a.metrics.http_req_failed?.type).toBe('rate');
    expect(a.metrics.vus?.type).toBe('gauge');
    expect(a.metrics.http_req_duration?.type).toBe('trend');
    expect(a.durationS).toBeCloseTo(10);
  });

  it('sums counters and divides by the global window', () => {
    expect(metrics.http_reqs?.values).toEqual({ count: 400, rate: 400 / 10.5 });
    expect(metrics['http_reqs{scenario:api}']?.values.count).toBe(400);
  });

  it('sums rate passes and fails', () => {
    expect(metrics.http_req_failed?.values).toEqual({ rate: 4 / 400, passes: 4, fails: 396 });
  });

  it('sums VUs but not other gauges', () => {
    expect(metrics.vus?.values).toEqual({ value: 12, min: 0, max: 12 });
    expect(metrics.my_gauge?.values).toEqual({ value: 70, min: 1, max: 70 });
  });

  it('leaves out runners whose gauge has no sample (k6 exports it as 0/0/0 when it has a threshold)', () => {
    // Measured with k6 v2.2.0: gauge.add(-5) on one of 4 runners; the others export 0/0/0.
    const runners = [{ value: -5, min: -5, max: -5 }, ...Array(3).fill({ value: 0, min: 0, max: 0 })].map(
      (g) =>
        parseRunnerSummary(
          JSON.stringify({ metrics: { temperature: { ...g, thresholds: { 'value<0': false } } } }),
        ),
    );
    expect(aggregateSummaries(runners, { durationS: 1 }).temperature?.values).toEqual({
      value: -5,
      min: -5,
      max: -5,
    });
    const allZero = runners.slice(1);
    expect(aggregateSummaries(allZero, { durationS: 1 }).temperature?.values).toEqual({
      value: 0,
      min: 0,
      max: 0,
    });
  });

  it('takes the vus gauge from the samples of the whole test when there are some', () => {
    const sampled = aggregateSummaries([a, b], { durationS: 10, sampledGauges: { vus: [12, 9, 4] } });
    expect(sampled.vus?.values).toEqual({ value: 4, min: 4, max: 12 });
    expect(sampled.my_gauge?.values).toEqual(metrics.my_gauge?.values);
    const none = aggregateSummaries([a, b], { durationS: 10, sampledGauges: { vus: [] } });
    expect(none.vus?.values).toEqual({ value: 12, min: 0, max: 12 });
  });

  it("marks the script's time trends as time where the REST API never told (a short run)", () => {
    const withTrend = (name: string) =>
      parseRunnerSummary(
        JSON.stringify({
          metrics: {
            [name]: { count: 1, min: 5, max: 5, avg: 5, med: 5 },
            [`${name}{name:a}`]: { count: 1, min: 5, max: 5, avg: 5, med: 5 },
          },
          root_group: { name: '', path: '', groups: {}, checks: {} },
        }),
      );
    // As the run passes them: the script's declarations, then what the REST API said, which wins.
    const declared = { think_time: 'time', polled: 'time' } as const;
    const polled = { polled: 'data' } as const;
    const merged = aggregateSummaries([withTrend('think_time'), withTrend('other'), withTrend('polled')], {
      durationS: 1,
      contains: { ...declared, ...polled },
    });
    expect(['think_time', 'think_time{name:a}', 'other', 'polled'].map((k) => merged[k]?.contains)).toEqual([
      'time',
      'time',
      'default',
      'data',
    ]);
  });

  it('keeps trend count, min, max and a count-weighted avg exact', () => {
    const v = metrics.http_req_duration!.values;
    expect([v.count, v.min, v.max]).toEqual([6, 1, 20]);
    expect(v.avg).toBeCloseTo((1 + 2 + 3 + 4 + 10 + 20) / 6, 10);
    expect(v['p(97.5)']).toBeGreaterThan(10);
    expect(Object.keys(v)).toEqual(
      expect.arrayContaining(['med', 'p(50)', 'p(90)', 'p(95)', 'p(99)', 'p(99.9)', 'p(99.99)', 'p(97.5)']),
    );
    expect(metrics.http_req_duration!.contains).toBe('time');
    expect(metrics.http_req_duration!.thresholds).toBeUndefined();
  });

  it('merges groups and checks by path', () => {
    const root = mergeGroups([a.rootGroup, b.rootGroup]);
    expect(root.groups).toHaveLength(1);
    expect(root.groups[0]!.checks).toEqual([{ name: 'ok', path: '::login::ok', passes: 396, fails: 4 }]);
  });
});

describe('uncertainty of a threshold on a merged percentile', () => {
  // Two runners, 1,000 samples each, 1..1000 ms and 501..1500 ms: the global p95 is near 1400 ms.
  const a = Array.from({ length: 1000 }, (_, i) => i + 1);
  const b = Array.from({ length: 1000 }, (_, i) => i + 501);
  const summaries = [a, b].map((latencies) =>
    parseRunnerSummary(exportJson({ requests: 1000, durationS: 10, latencies, failed: 0, vus: 1 })),
  );

  it('flags a limit inside the band between the merged values at p ∓ 0.02 points, and only then', () => {
    const thresholds = parseThresholds({ http_req_duration: ['p(95)<1400.1', 'p(95)<1300'] });
    const metrics = aggregateSummaries(summaries, { durationS: 10, percentiles: [95] });
    const [near, far] = evaluateThresholds(thresholds, metrics);
    const [low, high] = metrics.http_req_duration!.percentileBands!['p(95)']!;
    expect(low).toBeLessThan(1400.1);
    expect(high).toBeGreaterThan(1400.1);
    expect(near).toMatchObject({ uncertain: true, band: [low, high] });
    expect(far!.uncertain).toBeUndefined();
    expect(far!.ok).toBe(false);
  });

  it('gives bands only to the trends a percentile threshold judges and the latency trends, when asked', () => {
    const thresholds = parseThresholds({ 'http_req_duration{ name : login }': ['p(95)<900'] });
    const banded = bandedTrends(thresholds);
    expect(banded('http_req_duration{name:login}')).toBe(true);
    expect(banded('http_req_duration')).toBe(true);
    expect(banded('http_req_duration{expected_response:true}')).toBe(true);
    expect(banded('iteration_duration')).toBe(false);
    const metrics = aggregateSummaries(summaries, {
      durationS: 10,
      percentiles: [95],
      bands: (name) => name !== 'http_req_duration',
    });
    expect(metrics.http_req_duration!.percentileBands).toBeUndefined();
    expect(
      aggregateSummaries(summaries, { durationS: 10, percentiles: [95] }).http_req_duration!.percentileBands,
    ).toBeDefined();
  });
});
