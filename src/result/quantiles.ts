/**
 * Global percentiles from the runners' quantile grids.
 *
 * Each runner reports, for every trend, a dense grid of its own percentiles (`--summary-trend-stats`)
 * and its sample count. A runner's grid defines its empirical quantile function; linear interpolation
 * between grid points gives its CDF. The global CDF is the mixture of the runners' CDFs weighted by
 * their counts, and a global percentile is that mixture inverted. Averaging the runners' percentiles
 * would be wrong: on 4 runners with one slow node the mean of the p99s was 10.6% under the true p99
 * (DESIGN.md, "Merging percentiles across runners"). k6 defines a percentile by linear interpolation
 * between the sorted samples (`TrendSink.P`), so p(0) is the min and p(100) the max.
 */

/**
 * The percentiles (in percent) every runner reports: 1..99 every 1, 99.1..99.9 every 0.1,
 * 99.91..99.99 every 0.01, and 0.1, 0.5, 99.5, 99.95 where tails change fast.
 */
export const QUANTILE_GRID: readonly number[] = (() => {
  const grid = new Set<number>([0.1, 0.5, 99.5, 99.95]);
  for (let p = 1; p <= 99; p++) grid.add(p);
  for (let i = 1; i <= 9; i++) grid.add(Number((99 + i / 10).toFixed(1)));
  for (let i = 1; i <= 9; i++) grid.add(Number((99.9 + i / 100).toFixed(2)));
  return [...grid].sort((a, b) => a - b);
})();

/** The percentiles the global result reports for every trend, in percent. */
export const REPORTED_PERCENTILES: readonly number[] = [50, 90, 95, 99, 99.9, 99.99];

/** One runner's view of one trend. */
export interface QuantileGrid {
  /** Number of samples. */
  count: number;
  min: number;
  max: number;
  /** `[fraction in [0,1], value]`, ascending by fraction; need not include 0 and 1. */
  points: Array<[number, number]>;
}

/** A CDF as knots `(value, fraction)`, non-decreasing in both, from `(min, 0)` to `(max, 1)`. */
type Knots = Array<[number, number]>;

function knotsOf(grid: QuantileGrid): Knots {
  const knots: Knots = [[grid.min, 0]];
  for (const [p, v] of grid.points) {
    if (p <= 0 || p >= 1 || !Number.isFinite(v)) continue;
    // Clamp into [min, max] and keep values non-decreasing (k6 rounds nothing, but be safe).
    const last = knots[knots.length - 1]!;
    knots.push([Math.min(Math.max(v, last[0]), grid.max), p]);
  }
  knots.push([Math.max(grid.max, knots[knots.length - 1]![0]), 1]);
  return knots;
}

/** F(x) for one runner: the largest fraction reached at value x (right-continuous). */
function cdfAt(knots: Knots, x: number): number {
  if (x < knots[0]![0]) return 0;
  const last = knots[knots.length - 1]!;
  if (x >= last[0]) return 1;
  // Binary search for the last knot with value <= x.
  let lo = 0;
  let hi = knots.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (knots[mid]![0] <= x) lo = mid;
    else hi = mid;
  }
  const [x0, p0] = knots[lo]!;
  const [x1, p1] = knots[hi]!;
  return x1 === x0 ? p1 : p0 + ((p1 - p0) * (x - x0)) / (x1 - x0);
}

/**
 * Global percentiles of the union of the runners' samples.
 * @param grids one grid per runner; runners with `count` 0 are ignored.
 * @param percents the percentiles wanted, in percent (0..100).
 * @returns the values in the same order, in the trend's unit; all 0 when no runner has samples
 *   (k6 reports 0 for an empty trend).
 */
export function mergePercentiles(grids: readonly QuantileGrid[], percents: readonly number[]): number[] {
  const parts = grids.filter((g) => g.count > 0);
  if (parts.length === 0) return percents.map(() => 0);
  if (parts.length === 1) return percents.map((p) => quantileOf(knotsOf(parts[0]!), p / 100));
  const total = parts.reduce((sum, g) => sum + g.count, 0);
  const runners = parts.map((g) => ({ knots: knotsOf(g), weight: g.count / total }));
  // The mixture is piecewise linear between the union of every runner's knot values.
  const xs = [...new Set(runners.flatMap((r) => r.knots.map(([x]) => x)))].sort((a, b) => a - b);
  const mixture: Knots = xs.map((x) => [
    x,
    runners.reduce((sum, r) => sum + r.weight * cdfAt(r.knots, x), 0),
  ]);
  return percents.map((p) => quantileOf(mixture, p / 100));
}

/** Inverts a piecewise-linear CDF: the smallest value whose fraction reaches p. */
function quantileOf(knots: Knots, p: number): number {
  // The first knot may already hold mass (every runner's samples equal at the minimum).
  if (p <= knots[0]![1]) return knots[0]![0];
  for (let i = 1; i < knots.length; i++) {
    const [x1, p1] = knots[i]!;
    if (p1 >= p - 1e-12) {
      const [x0, p0] = knots[i - 1]!;
      return p1 === p0 ? x1 : x0 + ((x1 - x0) * (p - p0)) / (p1 - p0);
    }
  }
  return knots[knots.length - 1]![0];
}

/**
 * The percentile of raw samples with k6's definition (linear interpolation at rank p·(n−1)),
 * for tests and benchmarks that compare merged grids against the truth.
 * @param sorted samples in ascending order.
 * @param percent 0..100.
 */
export function exactPercentile(sorted: ArrayLike<number>, percent: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const i = (percent / 100) * (n - 1);
  const lo = sorted[Math.floor(i)]!;
  const hi = sorted[Math.ceil(i)]!;
  return lo + (hi - lo) * (i - Math.floor(i));
}
