import { describe, expect, it } from 'vitest';
import { QUANTILE_GRID } from '../../../src/result/quantile-grid.ts';
import { exactPercentile, mergePercentiles, type QuantileGrid } from '../../../src/result/quantiles.ts';

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

  it('ignores runners without samples', () => {
    const empty: QuantileGrid = { count: 0, min: 0, max: 0, points: [] };
    expect(mergePercentiles([empty, grids[0]!, empty], [95])).toEqual(mergePercentiles([grids[0]!], [95]));
  });

  it("gives each identical runner's own percentiles back", () => {
    const same = [grids[0]!, grids[0]!, grids[0]!];
    const own = mergePercentiles([grids[0]!], [50, 95, 99, 99.9]);
    const merged = mergePercentiles(same, [50, 95, 99, 99.9]);
    merged.forEach((v, i) => {
      expect(v).toBeCloseTo(own[i]!, 9);
    });
  });
});

/** A runner whose samples are uniform on [a, b]: its exact CDF is linear, so merges have exact answers. */
function uniform(count: number, a: number, b: number): QuantileGrid {
  return { count, min: a, max: b, points: QUANTILE_GRID.map((p) => [p / 100, a + ((b - a) * p) / 100]) };
}

describe('merging known mixtures', () => {
  it('inverts a mixture of overlapping uniform runners exactly', () => {
    // Samples so many that the continuous mixture answers (not the tail's rebuilt samples).
    // 1M samples on [0, 100] and 3M on [50, 150]: F(x) = 0.25·x/100 + 0.75·(x−50)/100 for x in [50, 100].
    // F(100) = 0.25 + 0.375 = 0.625, so p(60) lies in [50, 100]: 0.6 = x/100 − 0.375 → x = 97.5.
    // Above 100, F(x) = 0.25 + 0.75·(x−50)/100: p(90) → x = 50 + 100·0.65/0.75.
    const [p60, p90] = mergePercentiles([uniform(1e6, 0, 100), uniform(3e6, 50, 150)], [60, 90]);
    expect(p60).toBeCloseTo(97.5, 9);
    expect(p90).toBeCloseTo(50 + (100 * 0.65) / 0.75, 9);
  });

  it('puts a percentile of runners with disjoint ranges in the right runner, and the gap at the smaller end', () => {
    // Half the samples on [0, 10], half on [100, 110].
    const runners = [uniform(5e5, 0, 10), uniform(5e5, 100, 110)];
    const [p25, p50, p75] = mergePercentiles(runners, [25, 50, 75]);
    expect(p25).toBeCloseTo(5, 9);
    expect(p50).toBeCloseTo(10, 6);
    expect(p75).toBeCloseTo(105, 9);
  });

  it('gives the pooled p99.9 and p99.99 when each runner has only a few samples there', () => {
    // 8 runners of 2,500 samples, odd ones 40% slower: a runner holds 2.5 samples above its p99.9,
    // and k6 interpolates between the pool's adjacent samples, not between a runner's.
    const runners = Array.from({ length: 8 }, (_, i) =>
      latencies(2500 + 37 * i, i % 2 ? 14 : 10, 0.5, 40 + i),
    );
    const everything = Float64Array.from(runners.flatMap((r) => [...r])).sort();
    const merged = mergePercentiles(runners.map(gridOf), [99, 99.9, 99.99]);
    // Mixing the runners' interpolated CDFs gave −0.77% and −2.6% here (and −0.76% at p99, which is
    // too deep in the pool for the rebuilt samples: it stays with the mixture).
    const error = (i: number, p: number) => Math.abs(merged[i]! / exactPercentile(everything, p) - 1);
    expect(error(0, 99)).toBeLessThan(0.01);
    expect(error(1, 99.9)).toBeLessThan(0.0005);
    expect(error(2, 99.99)).toBeLessThan(0.0005);
  });

  it('keeps a bimodal latency within 0.02 percentage points of rank', () => {
    // 10% of requests take a slow path (about 200 ms) on every runner, and one runner is slower overall.
    const shapes = [0, 1, 2, 3].map((i) => {
      const fast = latencies(18_000, i === 3 ? 30 : 10, 0.3, 10 + i);
      const slow = latencies(2_000, 200, 0.2, 20 + i);
      return Float64Array.from([...fast, ...slow]).sort();
    });
    const everything = Float64Array.from(shapes.flatMap((r) => [...r])).sort();
    const merged = mergePercentiles(shapes.map(gridOf), [50, 90, 95, 99, 99.9]);
    [50, 90, 95, 99, 99.9].forEach((p, i) => {
      expect(merged[i]!).toBeGreaterThanOrEqual(exactPercentile(everything, p - 0.02));
      expect(merged[i]!).toBeLessThanOrEqual(exactPercentile(everything, Math.min(100, p + 0.02)));
    });
  });

  it('covers every reported percentile exactly on the grid', () => {
    for (const p of [50, 90, 95, 99, 99.9, 99.99]) expect(QUANTILE_GRID).toContain(p);
  });
});

describe('exact where the merge is exact (issue 25, defect 1)', () => {
  it('one runner: every percentile on its grid is its own value, to the bit', () => {
    const sorted = latencies(5000, 40, 0.6, 11);
    const grid = gridOf(sorted);
    const merged = mergePercentiles([grid], QUANTILE_GRID);
    const off = QUANTILE_GRID.filter((p, i) => merged[i] !== exactPercentile(sorted, p));
    expect(off).toEqual([]);
  });

  it('samples 0..399 dealt to 2 and 4 runners: p(99) and p(90) within the resolution of k6 values', () => {
    for (const n of [2, 4]) {
      const runners = Array.from({ length: n }, (_, r) =>
        Float64Array.from({ length: 400 / n }, (_, i) => i * n + r),
      );
      const [p99, p90] = mergePercentiles(runners.map(gridOf), [99, 90]);
      expect(Math.abs(p99! - 395.01)).toBeLessThan(1e-9);
      expect(Math.abs(p90! - 359.1)).toBeLessThan(1e-9);
    }
  });
});
