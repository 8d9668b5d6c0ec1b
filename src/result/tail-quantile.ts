/**
 * The tail of the merge (quantiles.ts): a high percentile as k6 computes it on the pooled samples,
 * from the runners' top samples rebuilt from their grids. Its own file: quantiles.ts holds the
 * grids and the mixture search; the knots' and the mixture's shapes are here, where both read them.
 */

/**
 * A CDF as knots `(xs[i], ps[i])`, non-decreasing in both, from `(min, 0)` to `(max, 1)`;
 * typed arrays because a 1,000-runner merge builds 1,000 of these per trend.
 */
export interface Knots {
  xs: Float64Array;
  ps: Float64Array;
}

/** The runners' CDFs with their weights (count / total count) and sample counts. */
export interface Mixture {
  knots: Knots[];
  weights: number[];
  counts: number[];
}

/** Most runner samples {@link tailQuantile} reconstructs for one percentile, over all runners. */
const TAIL_BUDGET = 16_384;
/**
 * {@link tailQuantile} answers only when the pooled percentile is among the pool's top this many
 * samples. There the grid's knots are about one sample apart (ratio 0.98), so the rebuilt samples
 * are the runners' own and the answer is k6's on the pool, where the continuous mixture misses it
 * by a few samples of rank: on real traffic (25,000 to 81,000 samples, 2 to 8 runners) that was
 * up to 0.9% at p99, where adjacent samples are 0.2 to 0.4% apart (bench/results/grid.md). With the
 * earlier, coarser grid (knots 10 points of rank apart at p99) rebuilding deeper than 50 samples
 * was worse than mixing.
 */
const TAIL_RANKS = 1000;

/**
 * A high percentile as k6 computes it on the pooled samples, from the runners' top samples rebuilt
 * from their grids; undefined when that needs more than {@link TAIL_BUDGET} samples (then the
 * continuous mixture is as good: the samples are dense there).
 *
 * Why: in the tail a runner has few samples (2,500 samples hold 2.5 above its p99.9), and k6
 * interpolates linearly between adjacent samples, of the runner for its own grid but of the pool
 * for the truth. Mixing the runners' interpolated CDFs then misses the pooled percentile by up to
 * half the gap between two top samples (several % at p99.9). With the pooled rank r = p·(N−1),
 * the truth only needs the pool's top ⌈N−1−r⌉+1 samples, which lie among each runner's top as many.
 */
export function tailQuantile({ knots, counts }: Mixture, p: number): number | undefined {
  let total = 0;
  for (const n of counts) total += n;
  const rank = p * (total - 1);
  const fromTop = Math.ceil(total - 1 - rank - 1e-9);
  if (fromTop > TAIL_RANKS) return undefined;
  const need = fromTop + 1;
  let size = 0;
  for (const n of counts) size += Math.min(n, need);
  if (size > TAIL_BUDGET) return undefined;
  const top = new Float64Array(size);
  let o = 0;
  counts.forEach((n, i) => {
    for (let j = 0; j < Math.min(n, need); j++) top[o++] = sampleAt(knots[i]!, n, n - 1 - j);
  });
  top.sort();
  // Ascending pooled ranks lo..hi are the `fromTop`-th and the next one from the top.
  const lo = Math.floor(rank + 1e-9);
  const hi = Math.min(lo + 1, total - 1);
  const xLo = top[size - 1 - (total - 1 - lo)]!;
  const xHi = top[size - 1 - (total - 1 - hi)]!;
  return xLo + (xHi - xLo) * Math.max(0, rank - lo);
}

/**
 * A runner's `k`-th smallest sample (0-based, of `n`) from its knots. k6's quantile function is
 * linear between adjacent samples, with a kink at each one: a knot at rank k gives the sample
 * exactly; otherwise two knots on the same side of it within one sample step lie on one line of
 * that function, which is extended to rank k; else the knots around it are interpolated.
 */
function sampleAt({ xs, ps }: Knots, n: number, k: number): number {
  if (n <= 1 || k >= n - 1) return xs[xs.length - 1]!;
  if (k <= 0) return xs[0]!;
  const step = 1 / (n - 1);
  const f = k * step;
  // b: first knot at or above f.
  let a = 0;
  let b = xs.length - 1;
  while (b - a > 1) {
    const mid = (a + b) >> 1;
    if (ps[mid]! >= f) b = mid;
    else a = mid;
  }
  const tol = 1e-9;
  if (Math.abs(ps[b]! - f) < tol) return xs[b]!;
  a = b - 1;
  const lowX = xs[a]!;
  const highX = xs[b]!;
  if (a >= 1 && ps[a - 1]! >= f - step - tol && ps[a]! > ps[a - 1]!) {
    const x = xs[a]! + ((xs[a]! - xs[a - 1]!) * (f - ps[a]!)) / (ps[a]! - ps[a - 1]!);
    return Math.min(Math.max(x, lowX), highX);
  }
  if (b + 1 < xs.length && ps[b + 1]! <= f + step + tol && ps[b + 1]! > ps[b]!) {
    const x = xs[b]! - ((xs[b + 1]! - xs[b]!) * (ps[b]! - f)) / (ps[b + 1]! - ps[b]!);
    return Math.min(Math.max(x, lowX), highX);
  }
  return ps[b]! === ps[a]! ? highX : lowX + ((highX - lowX) * (f - ps[a]!)) / (ps[b]! - ps[a]!);
}

/** Inverts a piecewise-linear CDF: the smallest value whose fraction reaches p (binary search). */
