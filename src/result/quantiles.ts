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
 *
 * In the tail, where the pool's answer needs only a few thousand of the runners' top samples, those
 * samples are rebuilt from the grids and the percentile is taken on them as k6 would on the pool
 * (see `tailQuantile`): there a runner has few samples, and interpolating between its own samples
 * instead of the pool's was the largest error left (p99.9 off by up to 5.6% on real traffic).
 *
 * Which percentiles the runners report (the grid) is src/result/quantile-grid.ts.
 */

import { type Knots, type Mixture, tailQuantile } from './tail-quantile.ts';

/** One runner's view of one trend: its sample count, min, max and grid of percentiles. */
export interface QuantileGrid {
  /** Number of samples. */
  count: number;
  min: number;
  max: number;
  /** `[fraction in [0,1], value]`, ascending by fraction; need not include 0 and 1. */
  points: Array<[number, number]>;
  /**
   * The same points packed (fractions ascending, values), when the grid was read that way
   * (`parseRunnerSummary` does: a 1,000-runner merge would otherwise allocate millions of pairs).
   */
  packed?: {
    fractions: Float64Array<ArrayBufferLike>;
    values: Float64Array<ArrayBufferLike>;
    /** `[min, …values, max]`, when the reader has them in one array (the values a view of it). */
    knots?: Float64Array<ArrayBufferLike>;
  };
}

/**
 * The value a runner's grid holds at `fraction` (0–1, e.g. 0.95), or undefined when the grid has no
 * such point (matched to 1e-9). Reads the packed arrays when the grid has them: `points` would
 * build ~970 pairs per runner (a 1,000-runner result reads each runner's p(95)).
 */
export function gridValueAt(grid: QuantileGrid, fraction: number): number | undefined {
  const packed = grid.packed;
  if (!packed) return grid.points.find(([p]) => Math.abs(p - fraction) < 1e-9)?.[1];
  const { fractions, values } = packed;
  for (let i = 0; i < fractions.length; i++) if (Math.abs(fractions[i]! - fraction) < 1e-9) return values[i];
  return undefined;
}

/** Knots already built, by grid: the merge and the threshold bands read the same grids. */
const knotsCache = new WeakMap<QuantileGrid, Knots>();

/**
 * The fractions `[0, …grid, 1]` of packed grids read with their knots in one array, by their
 * fractions array: every runner of a run shares one layout (summary.ts), so a 1,000-runner merge
 * builds this once instead of 1,000 times ({@link directKnots}).
 */
const sharedFractions = new WeakMap<ArrayLike<number>, Float64Array>();

/**
 * A grid's CDF knots `(xs, ps)` as the merge reads them (cached per grid). When `xs` is the grid's
 * own `packed.knots`, the grid was already a CDF (finite, non-decreasing values, fractions strictly
 * inside (0, 1)) and `ps` is `[0, …fractions, 1]`.
 */
export function knotsOf(grid: QuantileGrid): Knots {
  const cached = knotsCache.get(grid);
  if (cached) return cached;
  const direct = directKnots(grid);
  if (direct) {
    knotsCache.set(grid, direct);
    return direct;
  }
  const fractions = grid.packed?.fractions;
  const values = grid.packed?.values;
  const size = fractions ? fractions.length : grid.points.length;
  const xs = new Float64Array(size + 2);
  const ps = new Float64Array(size + 2);
  xs[0] = grid.min;
  let n = 1;
  for (let i = 0; i < size; i++) {
    const p = fractions ? fractions[i]! : grid.points[i]![0];
    const v = values ? values[i]! : grid.points[i]![1];
    if (p <= 0 || p >= 1 || !Number.isFinite(v)) continue;
    // Clamp into [min, max] and keep values non-decreasing (k6 rounds nothing, but be safe).
    xs[n] = Math.min(Math.max(v, xs[n - 1]!), grid.max);
    ps[n] = p;
    n++;
  }
  xs[n] = Math.max(grid.max, xs[n - 1]!);
  ps[n] = 1;
  const knots = { xs: xs.subarray(0, n + 1), ps: ps.subarray(0, n + 1) };
  knotsCache.set(grid, knots);
  return knots;
}

/**
 * The knots of a grid read packed with `[min, …values, max]` in one array, used as they are when
 * they already are a CDF's knots (values finite and non-decreasing, fractions strictly inside
 * (0, 1)): a 1,000-runner merge then copies nothing. Undefined otherwise ({@link knotsOf} copies).
 */
function directKnots(grid: QuantileGrid): Knots | undefined {
  const packed = grid.packed;
  const xs = packed?.knots;
  if (!packed || !xs || xs.length !== packed.fractions.length + 2) return undefined;
  let ps = sharedFractions.get(packed.fractions);
  if (!ps) {
    const f = packed.fractions;
    for (let i = 0; i < f.length; i++)
      if (!(f[i]! > 0 && f[i]! < 1 && (i === 0 || f[i]! > f[i - 1]!))) return undefined;
    ps = new Float64Array(f.length + 2);
    ps.set(f, 1);
    ps[f.length + 1] = 1;
    sharedFractions.set(f, ps);
  }
  for (let i = 1; i < xs.length; i++) if (!(xs[i]! >= xs[i - 1]!)) return undefined;
  return Number.isFinite(xs[0]!) && Number.isFinite(xs[xs.length - 1]!)
    ? { xs: xs as Float64Array, ps }
    : undefined;
}

/**
 * Global percentiles of the union of the runners' samples.
 *
 * Cost O(N · log G) per percentile for N runners with G grid points: the global value lies between
 * the smallest and the largest runner's own percentile at that rank, so it is searched for on the
 * value inside that bracket, evaluating each runner's CDF by binary search on its knots. The search
 * alternates false-position steps (exact in one step where the mixture is linear) with halvings
 * (so a plateau or a kink cannot stall it) and stops at a relative width of 1e-9. A tail percentile
 * whose answer lies among the pool's top 1,000 samples (and the runners' top 16,384 in all) is taken
 * on those samples instead.
 * @param grids one grid per runner; runners with `count` 0 are ignored.
 * @param percents the percentiles wanted, in percent (0..100).
 * @returns the values in the same order, in the trend's unit; all 0 when no runner has samples
 *   (k6 reports 0 for an empty trend).
 */
export function mergePercentiles(grids: readonly QuantileGrid[], percents: readonly number[]): number[] {
  const mixture = mixtureOf(grids);
  return percents.map((p) => (mixture ? mixtureQuantile(mixture, p / 100) : 0));
}

function mixtureOf(grids: readonly QuantileGrid[]): Mixture | undefined {
  const parts = grids.filter((g) => g.count > 0);
  if (parts.length === 0) return undefined;
  const total = parts.reduce((sum, g) => sum + g.count, 0);
  return {
    knots: parts.map(knotsOf),
    weights: parts.map((g) => g.count / total),
    counts: parts.map((g) => g.count),
  };
}

/** Fractions closer than this are equal (float sums of N weights). */
const EPS = 1e-12;

/**
 * The merge's numerical resolution, relative to the value: the search stops at this relative
 * width, and rebuilt samples carry float rounding far below it. A merged value within this of
 * another number cannot be told from it: a threshold at k6's exact percentile (395.01) must not
 * fail on a merged 395.01000000000005 (src/k6/thresholds.ts).
 */
export const MERGE_RESOLUTION = 1e-9;

/** The smallest value where the mixture's CDF reaches p. */
function mixtureQuantile(mixture: Mixture, p: number): number {
  const { knots } = mixture;
  if (knots.length === 1) return quantileOf(knots[0]!, p);
  // k6's p(0) and p(100) are the min and the max: exact, no search.
  if (p <= 0) return Math.min(...knots.map((k) => k.xs[0]!));
  if (p >= 1) return Math.max(...knots.map((k) => k.xs[k.xs.length - 1]!));
  // F(min_i Q_i(p)) <= p <= F(max_i Q_i(p)): every runner's CDF is at most/at least p there.
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const k of knots) {
    const q = quantileOf(k, p);
    if (q < lo) lo = q;
    if (q > hi) hi = q;
  }
  if (lo === hi) return lo;
  const tail = tailQuantile(mixture, p);
  if (tail !== undefined) return tail;
  // Per runner, the last knot at or below lo, at or below hi, and at the point being tried: the
  // bracket only narrows, so each evaluation searches between the bracket's knots (a few) instead
  // of all ~970 (1,000 runners × ~20 evaluations per percentile: bench/results/scale.md).
  const n = knots.length;
  let atLo = new Int32Array(n);
  let atHi = new Int32Array(n);
  let atMid = new Int32Array(n);
  const scratch = new Int32Array(n);
  const none = new Int32Array(n).fill(-1);
  const ends = Int32Array.from(knots, (k) => k.xs.length - 1);
  let fLo = bracketedCdf(mixture, lo, none, ends, atLo);
  if (fLo >= p - EPS) return lo;
  let fHi = bracketedCdf(mixture, hi, atLo, ends, atHi);
  const tolerance = MERGE_RESOLUTION * Math.max(Math.abs(lo), Math.abs(hi));
  for (let i = 0; i < 200 && hi - lo > tolerance; i++) {
    let mid = i % 2 === 0 && fHi > fLo ? lo + ((hi - lo) * (p - fLo)) / (fHi - fLo) : lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) mid = lo + (hi - lo) / 2;
    const fMid = bracketedCdf(mixture, mid, atLo, atHi, atMid);
    if (fMid >= p - EPS) {
      // Reached p: done if the CDF is still below p just left of mid (not on a plateau at p).
      const left = mid - tolerance;
      if (fMid <= p + EPS && bracketedCdf(mixture, left, left >= lo ? atLo : none, atMid, scratch) < p - EPS)
        return mid;
      hi = mid;
      fHi = fMid;
      [atHi, atMid] = [atMid, atHi];
    } else {
      lo = mid;
      fLo = fMid;
      [atLo, atMid] = [atMid, atLo];
    }
  }
  return hi;
}

/**
 * The mixture's CDF at `x`: each runner's F(x) (the largest fraction reached at x, linear between
 * its knots, right-continuous), weighted by its share of the samples; with each runner's search for the last knot at or below `x` kept to
 * `[from[i], to[i]]` (-1: below the first knot); that knot's index is written to `found[i]`.
 */
function bracketedCdf(
  { knots, weights }: Mixture,
  x: number,
  from: Int32Array,
  to: Int32Array,
  found: Int32Array,
): number {
  let f = 0;
  for (let i = 0; i < knots.length; i++) {
    const { xs, ps } = knots[i]!;
    let a = from[i]!;
    let b = to[i]!;
    while (a < b) {
      const mid = (a + b + 1) >> 1;
      if (xs[mid]! <= x) a = mid;
      else b = mid - 1;
    }
    found[i] = a;
    const last = xs.length - 1;
    let c: number;
    if (a < 0) c = 0;
    else if (a >= last) c = 1;
    else {
      const x0 = xs[a]!;
      const x1 = xs[a + 1]!;
      c = x1 === x0 ? ps[a + 1]! : ps[a]! + ((ps[a + 1]! - ps[a]!) * (x - x0)) / (x1 - x0);
    }
    f += weights[i]! * c;
  }
  return f;
}

function quantileOf({ xs, ps }: Knots, p: number): number {
  // The first knot may already hold mass (every runner's samples equal at the minimum).
  if (p <= ps[0]!) return xs[0]!;
  let a = 1;
  let b = xs.length - 1;
  if (ps[b]! < p - EPS) return xs[b]!;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (ps[mid]! >= p - EPS) b = mid;
    else a = mid + 1;
  }
  const p0 = ps[a - 1]!;
  const p1 = ps[a]!;
  return p1 === p0 ? xs[a]! : xs[a - 1]! + ((xs[a]! - xs[a - 1]!) * (p - p0)) / (p1 - p0);
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
