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
 * The percentiles (in percent) every runner reports. Body: 0.1, 0.5, then 1..50 every 1 point.
 * Tail: geometric in the tail fraction (1 − p), ratio 0.9 from p50 down to p99.999 (q = 50%, 45%,
 * 40.5%, …), each q rounded to 3 significant digits so the `--summary-trend-stats` flag stays short.
 * A geometric tail keeps the knot spacing proportional to the distance from 100%, so the global p99
 * (which sits near p98.8 inside a faster runner) still falls between knots 0.1 point apart, and
 * p99.99 between knots 0.001 point apart. DESIGN.md ("Merging percentiles across runners") measured
 * this shape (159 points): p95 ≤0.08%, p99 ≤0.15%, p99.9 ≤0.19%, p99.99 ≤1.2%. The report's
 * percentiles are added exactly, with knots just around each (`percentsAround`).
 */
export const QUANTILE_GRID: readonly number[] = (() => {
  const grid = new Set<number>([0.1, 0.5]);
  for (let p = 1; p <= 50; p++) grid.add(p);
  for (let q = 50 * 0.9; q >= 0.001; q *= 0.9) grid.add(roundPercent(100 - Number(q.toPrecision(3))));
  for (const p of [50, 90, 95, 99, 99.9, 99.99]) for (const k of percentsAround(p)) grid.add(k);
  return [...grid].sort((a, b) => a - b);
})();

/**
 * A wanted percentile and knots just around it: (1 − p) scaled by 0.99..1.02, so p90 gets 89.98,
 * 89.95, 89.9, 89.8, 90.01, 90.02, 90.05. Inside each runner the global percentile lands near the
 * same rank when the runners share a shape (a bimodal latency's jump sits at the same rank in every
 * runner); knots 0.02 point apart there keep the merge's rank error within 0.02 point.
 * @param percent 0..100.
 * @returns percents, p itself included.
 */
export function percentsAround(percent: number): number[] {
  if (percent <= 0 || percent >= 100) return [percent];
  const q = 100 - percent;
  return [
    percent,
    ...[1.02, 1.01, 1.005, 1.002, 0.998, 0.995, 0.99].map((f) =>
      roundPercent(100 - Number((q * f).toPrecision(4))),
    ),
  ].filter((p) => p > 0 && p < 100);
}

/** Rounds a percentage to 6 decimals, dropping float noise such as 99.10000000000001. */
function roundPercent(p: number): number {
  return Number(p.toFixed(6));
}

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
 *
 * Cost O(N · log G) per percentile for N runners with G grid points: the global value lies between
 * the smallest and the largest runner's own percentile at that rank, so it is found by bisecting
 * on the value inside that bracket, evaluating each runner's CDF by binary search on its knots.
 * The bisection stops when the bracket no longer contains a knot of any runner (then the mixture
 * is linear there and one interpolation is exact) or after 64 halvings.
 * @param grids one grid per runner; runners with `count` 0 are ignored.
 * @param percents the percentiles wanted, in percent (0..100).
 * @returns the values in the same order, in the trend's unit; all 0 when no runner has samples
 *   (k6 reports 0 for an empty trend).
 */
export function mergePercentiles(grids: readonly QuantileGrid[], percents: readonly number[]): number[] {
  const mixture = mixtureOf(grids);
  return percents.map((p) => (mixture ? mixtureQuantile(mixture, p / 100) : 0));
}

/** The runners' CDFs with their weights (count / total count); undefined when no samples at all. */
interface Mixture {
  runners: Array<{ knots: Knots; weight: number }>;
}

function mixtureOf(grids: readonly QuantileGrid[]): Mixture | undefined {
  const parts = grids.filter((g) => g.count > 0);
  if (parts.length === 0) return undefined;
  const total = parts.reduce((sum, g) => sum + g.count, 0);
  return { runners: parts.map((g) => ({ knots: knotsOf(g), weight: g.count / total })) };
}

function mixtureCdf(mixture: Mixture, x: number): number {
  let f = 0;
  for (const r of mixture.runners) f += r.weight * cdfAt(r.knots, x);
  return f;
}

/** The smallest value where the mixture's CDF reaches p. */
function mixtureQuantile(mixture: Mixture, p: number): number {
  const { runners } = mixture;
  if (runners.length === 1) return quantileOf(runners[0]!.knots, p);
  // F(min_i Q_i(p)) <= p <= F(max_i Q_i(p)): each runner's CDF is below/above p there.
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const r of runners) {
    const q = quantileOf(r.knots, p);
    if (q < lo) lo = q;
    if (q > hi) hi = q;
  }
  let fHi = mixtureCdf(mixture, hi);
  if (lo === hi) return lo;
  let fLo = mixtureCdf(mixture, lo);
  if (fLo >= p - 1e-12) return lo;
  for (let i = 0; i < 64 && hi > lo; i++) {
    if (!runners.some((r) => hasKnotInside(r.knots, lo, hi))) break;
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    const fMid = mixtureCdf(mixture, mid);
    if (fMid >= p - 1e-12) {
      hi = mid;
      fHi = fMid;
    } else {
      lo = mid;
      fLo = fMid;
    }
  }
  return fHi === fLo ? hi : lo + ((hi - lo) * (p - fLo)) / (fHi - fLo);
}

/** Whether some knot value lies strictly between lo and hi (binary search). */
function hasKnotInside(knots: Knots, lo: number, hi: number): boolean {
  let a = 0;
  let b = knots.length;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (knots[mid]![0] <= lo) a = mid + 1;
    else b = mid;
  }
  return a < knots.length && knots[a]![0] < hi;
}

/** Inverts a piecewise-linear CDF: the smallest value whose fraction reaches p (binary search). */
function quantileOf(knots: Knots, p: number): number {
  // The first knot may already hold mass (every runner's samples equal at the minimum).
  if (p <= knots[0]![1]) return knots[0]![0];
  let a = 1;
  let b = knots.length - 1;
  if (knots[b]![1] < p - 1e-12) return knots[b]![0];
  while (a < b) {
    const mid = (a + b) >> 1;
    if (knots[mid]![1] >= p - 1e-12) b = mid;
    else a = mid + 1;
  }
  const [x1, p1] = knots[a]!;
  const [x0, p0] = knots[a - 1]!;
  return p1 === p0 ? x1 : x0 + ((x1 - x0) * (p - p0)) / (p1 - p0);
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
