import { K6_METRIC } from '../../src/k6/metrics.ts';
import { QUANTILE_GRID } from '../../src/result/quantile-grid.ts';
import { exactPercentile, type QuantileGrid } from '../../src/result/quantiles.ts';
import type { RunResult } from '../../src/result/schema.ts';
import type { TimelinePoint } from '../../src/result/timeline-schema.ts';
import { estimateUncertainty, type RunnerTrend } from '../../src/result/uncertainty.ts';
import { makeResult } from './results.ts';

/*
 * Simulated latency samples for the statistics tests: a seeded generator, runners' quantile grids
 * built from their samples as k6 reports them (k6's percentile definition, the product's grid), and
 * a result whose figures and in-run intervals come from those samples. Simulated because the
 * tests count how often an interval covers the truth over hundreds of draws, which real runs of a
 * few seconds each cannot give in a unit test; the real runs are in test/e2e/verdict.test.ts.
 */

/** A seeded uniform generator in [0, 1) (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n exponential samples of the given mean (ms). */
export function exponential(random: () => number, n: number, meanMs: number): number[] {
  return Array.from({ length: n }, () => -meanMs * Math.log(1 - random()));
}

/** A runner's trend as its summary reports it: count, mean and the quantile grid of its samples. */
export function trendOf(samples: readonly number[]): RunnerTrend {
  const sorted = Float64Array.from(samples).sort();
  const grid: QuantileGrid = {
    count: sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
    points: QUANTILE_GRID.map((p) => [p / 100, exactPercentile(sorted, p)]),
  };
  return { count: sorted.length, avg: samples.reduce((a, b) => a + b, 0) / samples.length, grid };
}

/**
 * A result of `runners` runners with `n` requests in all, latency exponential of mean `meanMs`,
 * spread over 1 s intervals of `perInterval` requests, its figures and in-run intervals from the
 * samples (`estimateUncertainty`).
 */
export function simulatedResult(
  seed: number,
  options: { n: number; meanMs: number; runners?: number; perInterval?: number },
): RunResult {
  const random = rng(seed);
  const runners = options.runners ?? 2;
  const samples = exponential(random, options.n, options.meanMs);
  const per = Math.ceil(options.n / runners);
  const trends = Array.from({ length: runners }, (_, i) => trendOf(samples.slice(i * per, (i + 1) * per)));
  const pooled = Float64Array.from(samples).sort();
  const perInterval = options.perInterval ?? 100;
  const points: TimelinePoint[] = [];
  for (let i = 0; i * perInterval < samples.length; i++) {
    const batch = samples.slice(i * perInterval, (i + 1) * perInterval);
    points.push({
      tS: i + 1,
      intervalS: 1,
      requests: batch.length,
      rps: batch.length,
      vus: 1,
      errorRate: 0,
      avgMs: batch.reduce((a, b) => a + b, 0) / batch.length,
      runners,
    });
  }
  const durationS = points.length;
  const result = makeResult({
    requests: options.n,
    rps: options.n / durationS,
    p50: exactPercentile(pooled, 50),
    p90: exactPercentile(pooled, 90),
    p95: exactPercentile(pooled, 95),
    p99: exactPercentile(pooled, 99),
    errorRate: 0,
    checksRate: 1,
  });
  result.uncertainty = estimateUncertainty({
    metrics: result.metrics,
    latency: { [K6_METRIC.httpReqDuration]: trends, [K6_METRIC.httpReqDurationExpected]: trends },
    points,
  });
  return result;
}
