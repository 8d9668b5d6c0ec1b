/**
 * Which percentiles the runners report and the result shows: the quantile grid every runner
 * reports for each trend (`--summary-trend-stats`, the input of the merge in src/result/quantiles.ts)
 * and the percentiles of the global result. Percentiles here are in percent (0..100).
 */

/**
 * The percentiles (in percent) every runner reports, 967 of them; bench/grid.ts chose this grid by
 * replaying the raw samples of real runs (bench/results/grid.md).
 * - Body: p0.1, 0.25, 0.5, 0.75, every 0.5 point from p1 to p20, every 0.25 point from p20 to p90.
 *   With runners of unequal speed the global median lands anywhere from a slower runner's p5 to a
 *   faster one's p75, and linear interpolation between knots 1 to 5 points apart, across a latency
 *   step (a path 1 ms slower), missed the global p50 by up to 48 samples of rank where the band is
 *   ±6 (0.02 point).
 * - Tail: geometric in the tail fraction (1 − p), ratio 0.98 from p51 down to p99.999 (q = 49%,
 *   48.02%, …), each q rounded to 3 significant digits. A geometric tail keeps the knot spacing
 *   proportional to the distance from 100%: around p99 knots are 0.02 point apart, around p99.9
 *   0.002, about one sample apart in a runner of 5,000 to 50,000 samples, so the tail's samples can
 *   be rebuilt from the grid (`tailQuantile`).
 * - The report's percentiles exactly, with knots just around each (`percentsAround`): every 0.05
 *   point within a point of p50, p90 and p95.
 * Runners get it in the environment (`runnerEnv` in run/plan.ts), not on the command line. Parsing
 * and merging it for 1,000 runners takes about 0.7 s (bench/results/scale.md).
 */
export const QUANTILE_GRID: readonly number[] = (() => {
  const grid = new Set<number>([0.1, 0.25, 0.5, 0.75]);
  for (let i = 0; i < 38; i++) grid.add(1 + i / 2); // p1, p1.5, … p19.5
  for (let i = 0; i <= 280; i++) grid.add(20 + i / 4); // p20, p20.25, … p90
  for (let q = 50 * 0.98; q >= 0.001; q *= 0.98) grid.add(roundPercent(100 - Number(q.toPrecision(3))));
  for (const p of [50, 90, 95, 99, 99.9, 99.99]) for (const k of percentsAround(p)) grid.add(k);
  return [...grid].sort((a, b) => a - b);
})();

/**
 * A wanted percentile and knots just around it:
 * - (1 − p) scaled by 0.99..1.02, so p90 gets 89.98, 89.95, 89.9, 89.8, 90.01, 90.02, 90.05.
 *   Inside each runner the global percentile lands near the same rank when the runners share a
 *   shape (a bimodal latency's jump sits at the same rank in every runner); knots 0.02 point apart
 *   there keep the merge's rank error within 0.02 point.
 * - Below p98, every 0.05 point from p − 1 to p + 1: with runners of unequal speed the global
 *   percentile lands up to a point away inside them, and a jump between two modes that falls
 *   between knots 0.25 point apart missed the rank band by up to 5 samples (bimodal p90,
 *   bench/results/grid.md). Above p98 the geometric tail is that dense already.
 * @param percent 0..100.
 * @returns percents, p itself included.
 */
export function percentsAround(percent: number): number[] {
  if (percent <= 0 || percent >= 100) return [percent];
  const q = 100 - percent;
  const window =
    percent <= 98 ? Array.from({ length: 41 }, (_, k) => roundPercent(percent - 1 + k * 0.05)) : [];
  return [
    percent,
    ...[1.02, 1.01, 1.005, 1.002, 0.998, 0.995, 0.99].map((f) =>
      roundPercent(100 - Number((q * f).toPrecision(4))),
    ),
    ...window,
  ].filter((p, i, all) => p > 0 && p < 100 && all.indexOf(p) === i);
}

/** Rounds a percentage to 6 decimals, dropping float noise such as 99.10000000000001. */
function roundPercent(p: number): number {
  return Number(p.toFixed(6));
}

/** The percentiles the global result reports for every trend, in percent. */
export const REPORTED_PERCENTILES: readonly number[] = [50, 90, 95, 99, 99.9, 99.99];
