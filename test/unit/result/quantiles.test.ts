import { describe, expect, it } from 'vitest';
import {
  exactPercentile,
  mergePercentiles,
  QUANTILE_GRID,
  type QuantileGrid,
} from '../../../src/result/quantiles.ts';

/** A deterministic generator, so that the figures do not change between runs. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return (s + 0.5) / 2 ** 32;
  };
}

/** Log-normal latencies in ms, like HTTP response times: median `median`, spread `sigma`. */
function latencies(n: number, median: number, sigma: number, seed: number): Float64Array {
  const rnd = random(seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const z = Math.sqrt(-2 * Math.log(rnd())) * Math.cos(2 * Math.PI * rnd());
    out[i] = median * Math.exp(sigma * z);
  }
  return out.sort();
}

/** What a runner reports: the k6 grid of its own samples (what --summary-trend-stats prints). */
function gridOf(sorted: Float64Array): QuantileGrid {
  return {
    count: sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
    points: QUANTILE_GRID.map((p) => [p / 100, exactPercentile(sorted, p)]),
  };
}

function relError(estimate: number, truth: number): number {
  return Math.abs(estimate - truth) / truth;
}

describe('global percentiles from runner quantile grids', () => {
  // Four runners, one on a slower node: the case where averaging percentiles goes wrong.
  const runners = [
    latencies(20_000, 20, 0.5, 1),
    latencies(20_000, 20, 0.5, 2),
    latencies(20_000, 20, 0.5, 3),
    latencies(12_000, 45, 0.7, 4),
  ];
  const all = Float64Array.from(runners.flatMap((r) => [...r])).sort();
  const grids = runners.map(gridOf);

  it.each([
    [50, 0.005],
    [90, 0.005],
    [95, 0.005],
    [99, 0.005],
    [99.9, 0.02],
  ])('p(%s) agrees with the percentile of all samples', (p, tolerance) => {
    const [merged] = mergePercentiles(grids, [p]);
    expect(relError(merged!, exactPercentile(all, p))).toBeLessThan(tolerance);
  });

  it("is far closer than averaging the runners' percentiles", () => {
    const truth = exactPercentile(all, 99);
    const averaged = runners.reduce((sum, r) => sum + exactPercentile(r, 99), 0) / runners.length;
    const [merged] = mergePercentiles(grids, [99]);
    expect(relError(averaged, truth)).toBeGreaterThan(0.05);
    expect(relError(merged!, truth)).toBeLessThan(relError(averaged, truth) / 10);
  });

  it('gives exact min and max at p(0) and p(100), and 0 for an empty trend', () => {
    expect(mergePercentiles(grids, [0, 100])).toEqual([all[0], all[all.length - 1]]);
    expect(mergePercentiles([{ count: 0, min: 0, max: 0, points: [] }], [95])).toEqual([0]);
  });

  it('handles runners with one sample and identical values', () => {
    const one: QuantileGrid = { count: 1, min: 7, max: 7, points: QUANTILE_GRID.map((p) => [p / 100, 7]) };
    const flat: QuantileGrid = { count: 3, min: 3, max: 3, points: QUANTILE_GRID.map((p) => [p / 100, 3]) };
    const [p50, p99] = mergePercentiles([one, flat], [50, 99]);
    expect(p50).toBe(3);
    expect(p99).toBeGreaterThan(3);
    expect(p99).toBeLessThanOrEqual(7);
  });
});
