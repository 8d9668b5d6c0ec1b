import { describe, expect, it } from 'vitest';
import type { NativeHistogram, RemoteWriteSeries } from '../../../src/k6/remote-write.ts';
import {
  bucketHalfWidth,
  EXPECTED_DURATION,
  histogramQuantiles,
  IntervalLatencyRecorder,
  latencyIntervals,
} from '../../../src/result/interval-latency.ts';
import { exactPercentile } from '../../../src/result/quantiles.ts';

/** A schema-3 histogram of `values` (s), as Prometheus buckets them: index ceil(log2(v) × 8). */
function histogramOf(values: number[], timestampMs: number): NativeHistogram {
  const buckets = new Map<number, number>();
  for (const v of values) {
    const i = Math.ceil(Math.log2(v) * 8);
    buckets.set(i, (buckets.get(i) ?? 0) + 1);
  }
  const sum = values.reduce((a, b) => a + b, 0);
  return { timestampMs, count: values.length, sum, schema: 3, zeroThreshold: 0, zeroCount: 0, buckets };
}

function push(name: string, labels: Record<string, string>, h: NativeHistogram): RemoteWriteSeries {
  return { labels: { __name__: name, ...labels }, histograms: [h] };
}

describe('histogramQuantiles', () => {
  it("is within 3% of k6's percentile of the raw values of a skewed continuous distribution (the midpoint alone: 4.4%)", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const values = Array.from({ length: 2000 }, () => 0.002 + 0.2 * random() ** 3);
    const sorted = [...values].sort((a, b) => a - b);
    const qs = [0.5, 0.9, 0.95, 0.99];
    const ours = histogramQuantiles(histogramOf(values, 0), qs);
    for (const [i, q] of qs.entries()) {
      const truth = exactPercentile(sorted, q * 100);
      expect(Math.abs(ours[i]! / truth - 1)).toBeLessThanOrEqual(0.03);
    }
  });
});

describe('histogramQuantiles of a lone sample', () => {
  it("gives its bucket's midpoint: within the bucket's half-width", () => {
    const [p50] = histogramQuantiles(histogramOf([0.0123], 0), [0.5]);
    expect(Math.abs(p50! / 0.0123 - 1)).toBeLessThanOrEqual(bucketHalfWidth(3));
    expect(bucketHalfWidth(3)).toBeCloseTo(0.0443, 4);
  });
});

describe('IntervalLatencyRecorder', () => {
  it('differences cumulative pushes, adds runners up by interval, and starts at the first data', () => {
    const rec = new IntervalLatencyRecorder({
      metrics: ['http_req_duration{name:slow}'],
      pushIntervalMs: 100,
    });
    const t0 = 1_000_000;
    const name = 'k6_http_req_duration_seconds';
    const fast = { expected_response: 'true', name: 'fast' };
    const slow = { expected_response: 'true', name: 'slow' };
    // Runner 0: 10 fast samples in interval 2 (t0+2000..3000), then 10 more slow ones in interval 3.
    rec.add(0, [push(name, fast, histogramOf(Array(10).fill(0.01), t0 + 2500))]);
    rec.add(0, [push(name, slow, histogramOf(Array(10).fill(0.1), t0 + 3500))]);
    // Runner 1: its cumulative histogram grows from 5 to 15 samples: the second push holds 10, and
    // its span (2950, 3450] counts in the interval of its middle, 3.
    rec.add(1, [push(name, fast, histogramOf(Array(5).fill(0.01), t0 + 2950))]);
    rec.add(1, [push(name, fast, histogramOf([...Array(5).fill(0.01), ...Array(10).fill(0.05)], t0 + 3450))]);
    // A counter and another metric are ignored.
    rec.add(1, [{ labels: { __name__: 'k6_http_reqs_total' }, histograms: [] }]);
    const series = rec.series(t0, 1000)!;
    expect(series.intervalS).toBe(1);
    const all = series.metrics.find((m) => m.metric === EXPECTED_DURATION)!;
    expect(all.unit).toBe('ms');
    expect(all.points.map((p) => [p.tS, p.count])).toEqual([
      [3, 15],
      [4, 20],
    ]);
    expect(all.points[0]!.p50).toBeCloseTo(10, -0.5);
    const slowSeries = series.metrics.find((m) => m.metric === 'http_req_duration{name:slow}')!;
    expect(slowSeries.points).toHaveLength(1);
    expect(slowSeries.points[0]!.count).toBe(10);
    expect(Math.abs(slowSeries.points[0]!.p95! / 100 - 1)).toBeLessThan(0.045);
  });

  it('gives nothing without a tracked histogram', () => {
    const rec = new IntervalLatencyRecorder({ metrics: [], pushIntervalMs: 100 });
    expect(rec.series(0, 1000)).toBeUndefined();
  });
});

describe('latencyIntervals', () => {
  it('gives 60 intervals or more, pushes 10 per interval, 200 ms at least', () => {
    expect(latencyIntervals(10)).toEqual({ intervalMs: 200, pushIntervalMs: 20 });
    expect(latencyIntervals(15)).toEqual({ intervalMs: 250, pushIntervalMs: 25 });
    expect(latencyIntervals(60)).toEqual({ intervalMs: 1000, pushIntervalMs: 100 });
    expect(latencyIntervals(3600)).toEqual({ intervalMs: 60_000, pushIntervalMs: 1000 });
  });
});
