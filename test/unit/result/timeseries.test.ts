import { describe, expect, it } from 'vitest';
import type { K6LiveMetric } from '../../../src/k6/rest.ts';
import { TimelineSchema } from '../../../src/result/timeline-schema.ts';
import { checkTotalsFromGroups, TimelineRecorder } from '../../../src/result/timeseries.ts';

/** A `/v1/metrics` answer as `parseMetrics` returns it (k6 v2.2.0 sink formats). */
function live(v: { requests: number; failedRate?: number; avgMs?: number; p95Ms?: number; vus?: number }) {
  const metrics: K6LiveMetric[] = [
    { name: 'http_reqs', type: 'counter', contains: 'default', sample: { count: v.requests, rate: 0 } },
    { name: 'http_req_failed', type: 'rate', contains: 'default', sample: { rate: v.failedRate ?? 0 } },
    { name: 'vus', type: 'gauge', contains: 'default', sample: { value: v.vus ?? 0 } },
  ];
  if (v.requests > 0)
    metrics.push({
      name: 'http_req_duration',
      type: 'trend',
      contains: 'time',
      sample: { min: 1, max: 100, avg: v.avgMs ?? 10, med: 5, 'p(90)': 20, 'p(95)': v.p95Ms ?? 30 },
    });
  return metrics;
}

const T0 = 1_700_000_000_000;

describe('TimelineRecorder', () => {
  it('turns cumulative counters of two runners into per-interval RPS, errors and an exact mean latency', () => {
    const rec = new TimelineRecorder({ intervalS: 5, startedAtMs: T0 });
    expect(
      rec.record(T0 + 5000, [
        { runner: 0, metrics: live({ requests: 100, failedRate: 0.1, avgMs: 10, p95Ms: 20, vus: 3 }) },
        { runner: 1, metrics: live({ requests: 150, failedRate: 0, avgMs: 20, p95Ms: 40, vus: 4 }) },
      ]),
    ).toEqual({
      tS: 5,
      intervalS: 5,
      requests: 250,
      rps: 50,
      vus: 7,
      errorRate: 10 / 250,
      avgMs: (100 * 10 + 150 * 20) / 250,
      p95MinMs: 20,
      p95MaxMs: 40,
      runners: 2,
    });
    // Second interval: runner 0 did 100 more at 30 ms (cumulative avg 20), runner 1 50 more at 20 ms.
    const p = rec.record(T0 + 10_000, [
      { runner: 0, metrics: live({ requests: 200, failedRate: 0.05, avgMs: 20, p95Ms: 50, vus: 3 }) },
      { runner: 1, metrics: live({ requests: 200, failedRate: 0, avgMs: 20, p95Ms: 40, vus: 4 }) },
    ]);
    expect(p).toMatchObject({ tS: 10, requests: 150, rps: 30, errorRate: 0, p95MinMs: 40, p95MaxMs: 50 });
    expect(p?.avgMs).toBeCloseTo((100 * 30 + 50 * 20) / 150, 2);
    expect(TimelineSchema.parse(rec.series()).points).toHaveLength(2);
  });

  it('makes a point at the first poll that reaches each slot of the interval grid, without drifting', () => {
    const rec = new TimelineRecorder({ intervalS: 5, startedAtMs: T0 });
    const polls = [1000, 2000, 3000, 3900, 4950, 6000, 7000, 8000, 9000, 9990];
    const made = polls.map((at, i) =>
      rec.record(T0 + at, [{ runner: 0, metrics: live({ requests: (i + 1) * 10 }) }]),
    );
    expect(made.map((p) => p?.tS).filter((t) => t !== undefined)).toEqual([4.95, 9.99]);
    const series = rec.finish(T0 + 11_000);
    expect(series.points.map((p) => p.tS)).toEqual([4.95, 9.99, 11]);
    expect(series.points.at(-1)).toMatchObject({ intervalS: 1.01, requests: 0, rps: 0, runners: 0 });
    expect(series.points.reduce((a, p) => a + p.requests, 0)).toBe(100);
  });

  it('keeps the last counts of a runner that ended or did not answer, and drops the VUs of one that ended', () => {
    const rec = new TimelineRecorder({ intervalS: 1, startedAtMs: T0 });
    rec.record(T0 + 1000, [
      { runner: 0, metrics: live({ requests: 50, vus: 2 }) },
      { runner: 1, metrics: live({ requests: 50, vus: 2 }) },
    ]);
    // Runner 0 does not answer (no drop to zero, its 2 VUs stay), runner 1 did 10 more.
    const quiet = rec.record(T0 + 2000, [
      { runner: 0 },
      { runner: 1, metrics: live({ requests: 60, vus: 2 }) },
    ]);
    expect(quiet).toMatchObject({ requests: 10, vus: 4, runners: 1 });
    // Runner 0 ended: its counts stay, its VUs are gone; no negative RPS.
    const ended = rec.record(T0 + 3000, [
      { runner: 0, ended: true, metrics: [] },
      { runner: 1, metrics: live({ requests: 70, vus: 2 }) },
    ]);
    expect(ended).toMatchObject({ requests: 10, vus: 2 });
    // A late, smaller reading is ignored rather than counted as negative requests.
    expect(rec.record(T0 + 4000, [{ runner: 1, metrics: live({ requests: 65, vus: 2 }) }])).toMatchObject({
      requests: 0,
      rps: 0,
    });
  });

  it('marks p95 exact while only one runner has requests, and a band once several have', () => {
    const rec = new TimelineRecorder({ intervalS: 1, startedAtMs: T0 });
    const one = rec.record(T0 + 1000, [
      { runner: 0, metrics: live({ requests: 10, p95Ms: 12 }) },
      { runner: 1, metrics: live({ requests: 0 }) },
    ]);
    expect(one).toMatchObject({ p95Ms: 12, p95MinMs: 12, p95MaxMs: 12 });
    const two = rec.record(T0 + 2000, [
      { runner: 0, metrics: live({ requests: 20, p95Ms: 12 }) },
      { runner: 1, metrics: live({ requests: 10, p95Ms: 18 }) },
    ]);
    expect(two).toMatchObject({ p95MinMs: 12, p95MaxMs: 18 });
    expect(two?.p95Ms).toBeUndefined();
    const none = new TimelineRecorder({ intervalS: 1, startedAtMs: T0 }).record(T0 + 1000, [
      { runner: 0, metrics: live({ requests: 0 }) },
    ]);
    expect(none).toEqual({ tS: 1, intervalS: 1, requests: 0, rps: 0, vus: 0, errorRate: 0, runners: 1 });
  });

  it('counts failed checks per interval from /v1/groups totals, and leaves the field out without them', () => {
    const rec = new TimelineRecorder({ intervalS: 1, startedAtMs: T0 });
    const a = rec.record(T0 + 1000, [
      { runner: 0, metrics: live({ requests: 5 }), checks: { passes: 8, fails: 2 } },
      { runner: 1, metrics: live({ requests: 5 }), checks: { passes: 9, fails: 1 } },
    ]);
    const b = rec.record(T0 + 2000, [
      { runner: 0, metrics: live({ requests: 6 }), checks: { passes: 9, fails: 7 } },
      { runner: 1, metrics: live({ requests: 6 }), checks: { passes: 10, fails: 1 } },
    ]);
    expect([a?.checksFailed, b?.checksFailed]).toEqual([3, 5]);
    const without = new TimelineRecorder({ intervalS: 1, startedAtMs: T0 });
    expect(without.record(T0 + 1000, [{ runner: 0, metrics: live({ requests: 5 }) }])).not.toHaveProperty(
      'checksFailed',
    );
  });

  it('reads check totals from a /v1/groups answer across nested groups, and refuses another document', () => {
    const doc = {
      data: [
        { type: 'groups', id: 'd41d', attributes: { path: '', name: '', checks: [{ passes: 3, fails: 1 }] } },
        {
          type: 'groups',
          id: 'a1',
          attributes: {
            path: '::login',
            name: 'login',
            checks: [
              { passes: 2, fails: 0 },
              { passes: 0, fails: 4 },
            ],
          },
        },
        { type: 'groups', id: 'b2', attributes: { path: '::empty', name: 'empty', checks: null } },
      ],
    };
    expect(checkTotalsFromGroups(doc)).toEqual({ passes: 5, fails: 5 });
    expect(() => checkTotalsFromGroups({ errors: [] })).toThrow(/unexpected k6 groups response/);
  });

  it('closes the series with the runner summaries, so it adds up to the result totals', () => {
    const rec = new TimelineRecorder({ intervalS: 1, startedAtMs: T0 });
    rec.record(T0 + 1000, [{ runner: 0, metrics: live({ requests: 90, failedRate: 0, vus: 5 }) }]);
    // The summary (handleSummary shape) counts 10 more requests than the last poll saw, 2 failed.
    const summary: K6LiveMetric[] = [
      { name: 'http_reqs', type: 'counter', contains: 'default', sample: { count: 100, rate: 50 } },
      {
        name: 'http_req_failed',
        type: 'rate',
        contains: 'default',
        sample: { rate: 0.02, passes: 2, fails: 98 },
      },
      { name: 'http_req_duration', type: 'trend', contains: 'time', sample: { avg: 11, 'p(95)': 30 } },
      { name: 'checks', type: 'rate', contains: 'default', sample: { rate: 0.99, passes: 198, fails: 2 } },
      { name: 'vus', type: 'gauge', contains: 'default', sample: { value: 5 } },
    ];
    const series = rec.finish(T0 + 1500, [{ runner: 0, ended: true, metrics: summary }]);
    expect(series.points.reduce((a, p) => a + p.requests, 0)).toBe(100);
    expect(series.points.at(-1)).toMatchObject({ requests: 10, errorRate: 0.2, checksFailed: 2, vus: 0 });
    expect(series.points.at(-1)!.avgMs).toBeCloseTo((100 * 11 - 90 * 10) / 10, 6);
  });

  it('refuses an interval that is not a positive number of seconds', () => {
    expect(() => new TimelineRecorder({ intervalS: 0, startedAtMs: T0 })).toThrow(
      /positive number of seconds/,
    );
  });
});
