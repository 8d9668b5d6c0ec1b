import { WINDOW_PERCENTILES, type WindowStats } from './runs.ts';

/**
 * The calibration bench's statistics: verdict shares with counts, a cluster bootstrap of a share
 * over runs, the window-mixture percentiles and the moving-block bootstrap of synthetic runs, and
 * the stand-in paired t-test.
 */

/** A seeded PRNG (mulberry32), so that a re-judging gives the same figures. */
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

/** `k of n (x.x%)`. */
export const share = (k: number, n: number): string =>
  n === 0 ? '0 of 0' : `${k} of ${n} (${((100 * k) / n).toFixed(1)}%)`;

/**
 * Upper 95% bound of a share judged over every pair of two samples of runs, by resampling the
 * runs (a cluster bootstrap: pairs that share a run are not independent, runs are).
 * @param hit hit(i, j): pair (base i, head j) counted; with `same`, pairs i = j are left out.
 */
export function clusterUpper(
  nBase: number,
  nHead: number,
  hit: (i: number, j: number) => boolean,
  same: boolean,
  draws = 400,
): number {
  const r = rng(7);
  const shares: number[] = [];
  for (let d = 0; d < draws; d++) {
    const bi = Array.from({ length: nBase }, () => Math.floor(r() * nBase));
    const hi = same ? bi : Array.from({ length: nHead }, () => Math.floor(r() * nHead));
    let k = 0;
    let n = 0;
    for (let a = 0; a < bi.length; a++)
      for (let b = 0; b < hi.length; b++) {
        if (same && a === b) continue;
        if (same && bi[a] === hi[b]) continue;
        n++;
        if (hit(bi[a]!, hi[b]!)) k++;
      }
    shares.push(n ? k / n : 0);
  }
  shares.sort((x, y) => x - y);
  return shares[Math.floor(0.95 * (shares.length - 1))] ?? 0;
}

const KNOTS = [0, ...WINDOW_PERCENTILES.map((p) => p / 100), 1];

/** A window's CDF at x, piecewise linear through its min, its WINDOW_PERCENTILES and its max. */
function windowCdf(w: WindowStats, x: number): number {
  const v = w.slice(1) as number[];
  if (x <= v[0]!) return 0;
  for (let i = 1; i < v.length; i++)
    if (x <= v[i]!)
      return (
        KNOTS[i - 1]! + ((KNOTS[i]! - KNOTS[i - 1]!) * (x - v[i - 1]!)) / Math.max(1e-12, v[i]! - v[i - 1]!)
      );
  return 1;
}

/** Windows' CDFs on one log-spaced latency grid, count-weighted: summing them mixes windows. */
export class WindowGrid {
  readonly xs: Float64Array;
  constructor(all: WindowStats[], points = 512) {
    const lo = Math.max(0.01, Math.min(...all.map((w) => w[2] ?? 0)) * 0.9);
    const hi = Math.max(...all.map((w) => w.at(-1) ?? 0)) * 1.01;
    this.xs = Float64Array.from({ length: points }, (_, i) => lo * (hi / lo) ** (i / (points - 1)));
  }
  /** count × CDF at every grid point. */
  weighted(w: WindowStats): Float64Array {
    return this.xs.map((x) => (w[0] ?? 0) * windowCdf(w, x));
  }
  /** Quantile q (0–1) of a mixture whose weighted CDFs were summed into `sum` over `count` samples, ms. */
  quantile(sum: Float64Array, count: number, q: number): number {
    const target = q * count;
    for (let i = 0; i < sum.length; i++)
      if (sum[i]! >= target) {
        if (i === 0) return this.xs[0]!;
        const f = (target - sum[i - 1]!) / Math.max(1e-12, sum[i]! - sum[i - 1]!);
        return this.xs[i - 1]! + f * (this.xs[i]! - this.xs[i - 1]!);
      }
    return this.xs[sum.length - 1]!;
  }
}

/** A run's windows, prepared on a grid. */
export interface GridRun {
  counts: number[];
  cdfs: Float64Array[];
}

export function gridRun(grid: WindowGrid, windows: WindowStats[]): GridRun {
  return { counts: windows.map((w) => w[0] ?? 0), cdfs: windows.map((w) => grid.weighted(w)) };
}

/**
 * A synthetic run of `length` windows: moving blocks of `block` consecutive windows (circular)
 * drawn with replacement; each block from `pick()`'s run (always the same run: the run's own level
 * is kept; a random run per block: pooled). Returns its p95 and p99, ms.
 */
export function syntheticRun(
  grid: WindowGrid,
  pick: () => GridRun,
  length: number,
  block: number,
  r: () => number,
): { p95: number; p99: number } {
  const sum = new Float64Array(grid.xs.length);
  let count = 0;
  let run = pick();
  for (let got = 0; got < length; ) {
    const n = run.cdfs.length;
    const b = Math.min(block, n);
    const start = Math.floor(r() * n);
    for (let i = 0; i < b && got < length; i++, got++) {
      const w = (start + i) % n;
      const c = run.cdfs[w]!;
      for (let g = 0; g < sum.length; g++) sum[g]! += c[g]!;
      count += run.counts[w]!;
    }
    run = pick();
  }
  return { p95: grid.quantile(sum, count, 0.95), p99: grid.quantile(sum, count, 0.99) };
}

/** One-sided 99% quantiles of Student's t by degrees of freedom (1–30; above: 2.326). */
const T99 = [
  31.821, 6.965, 4.541, 3.747, 3.365, 3.143, 2.998, 2.896, 2.821, 2.764, 2.7181, 2.681, 2.65, 2.624, 2.602,
  2.583, 2.567, 2.552, 2.539, 2.528, 2.518, 2.508, 2.5, 2.492, 2.485, 2.479, 2.473, 2.467, 2.462, 2.457,
];

/**
 * STAND-IN for the product's paired judging (src/compare/paired.ts, not on this branch yet): a
 * paired t-test of the rounds' log-ratios ln(p95 head / p95 base), one-sided at 1%.
 * - `regressed`: the 99% lower bound of the mean log-ratio is above 0 and the mean ratio is above
 *   1 + `tolerance`;
 * - `pass` (no regression): the 99% upper bound is below ln(1 + `passTolerance`);
 * - `inconclusive`: otherwise.
 * @param ratios p95 head / p95 base of each round (fractions, not percent).
 */
export function pairedTTest(
  ratios: number[],
  tolerance = 0.03,
  passTolerance = 0.1,
): 'regressed' | 'pass' | 'inconclusive' {
  const d = ratios.map(Math.log);
  const k = d.length;
  const mean = d.reduce((a, b) => a + b, 0) / k;
  const sd = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, k - 1));
  const half = (T99[k - 2] ?? 2.326) * (sd / Math.sqrt(k));
  if (mean - half > 0 && Math.exp(mean) - 1 > tolerance) return 'regressed';
  if (mean + half < Math.log(1 + passTolerance)) return 'pass';
  return 'inconclusive';
}
