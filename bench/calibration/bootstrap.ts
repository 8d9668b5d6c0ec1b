import { DEFAULT_TOLERANCES, judgeChange } from '../../src/compare/judgement.ts';
import { factorLabel } from './plan.ts';
import type { RunRecord } from './runs.ts';
import { type GridRun, gridRun, pairedTTest, rng, syntheticRun, WindowGrid } from './stats.ts';

/**
 * The 1% level and the run size, from the real runs' own interval data: synthetic runs made of
 * moving blocks of consecutive windows (per-window latency quantiles of real runs, see
 * script.ts), judged by the rules the bench can apply to percentiles alone:
 * - fixed rule: p95 or p99 worse beyond DEFAULT_TOLERANCES (relative and absolute) → regressed
 *   (RPS, errors and checks are left out: the target is not under load beyond its rate);
 * - A/B rounds: the stand-in paired t-test on K synthetic rounds of length/K windows each, round k
 *   drawn from the A and B runs of one real round (so that the pair shares its moment).
 * Runs whose generator saturated are left out (the product judges them inconclusive).
 * Two ways to pick the runs: `per-run` takes every block of a synthetic run from one real run (the
 * run's own level, e.g. a busy minute, is kept whole: conservative for lengths beyond the real
 * run's), `pooled` takes each block from any run of the cell (optimistic: the run-to-run level
 * averages out).
 */

/** Figures of one synthetic size. */
export interface BootstrapRow {
  shape: string;
  variant: 'per-run' | 'pooled';
  /** Windows per synthetic run, and what that is in seconds and requests per side. */
  windows: number;
  seconds: number;
  requestsPerSide: number;
  /** kind (A/A, +5%…) → share judged regressed (0–1) and inconclusive, over `draws` synthetic pairs. */
  fixed: Record<string, { regressed: number }>;
  ab: Record<string, { regressed: number; inconclusive: number }>;
  draws: number;
}

const BLOCK = 3;

/** How well the window mixture reproduces each real run's p95: median |relative error|. */
export function mixtureError(runs: RunRecord[], real: (r: RunRecord) => number | undefined): number {
  const errs: number[] = [];
  for (const r of runs) {
    const p = real(r);
    if (!p || r.windows.length === 0) continue;
    const grid = new WindowGrid(r.windows);
    const g = gridRun(grid, r.windows);
    const sum = new Float64Array(grid.xs.length);
    for (const c of g.cdfs) for (let i = 0; i < sum.length; i++) sum[i]! += c[i]!;
    errs.push(
      Math.abs(
        grid.quantile(
          sum,
          g.counts.reduce((x, y) => x + y, 0),
          0.95,
        ) /
          p -
          1,
      ),
    );
  }
  errs.sort((x, y) => x - y);
  return errs[Math.floor(errs.length / 2)] ?? Number.NaN;
}

/** Synthetic figures for one shape at each length (in windows). */
export function bootstrapShape(
  shape: string,
  allRuns: RunRecord[],
  lengths: number[],
  windowS: number,
  abRounds: number,
  draws: number,
): BootstrapRow[] {
  // A saturated run is judged inconclusive by the product: it has no place in a latency figure.
  const runs = allRuns.filter((r) => !r.result.loadGenerator?.saturated);
  const cell = (f: number) =>
    runs.filter((r) => r.cell === `${shape}×${factorLabel(f)}` && r.windows.length > 0);
  const a = cell(1);
  if (a.length < 2) return [];
  const factors = [
    ...new Set(runs.filter((r) => r.shape === shape && !r.saturated && r.factor !== 1).map((r) => r.factor)),
  ].sort();
  const grid = new WindowGrid(
    runs.filter((r) => r.shape === shape).flatMap((r) => r.windows),
    384,
  );
  const prep = new Map<RunRecord, GridRun>(
    runs.filter((r) => r.shape === shape).map((r) => [r, gridRun(grid, r.windows)]),
  );
  const perWindow = a.flatMap((r) => r.windows.map((w) => w[0] ?? 0));
  const reqPerWindow = perWindow.reduce((x, y) => x + y, 0) / perWindow.length;
  const out: BootstrapRow[] = [];
  for (const variant of ['per-run', 'pooled'] as const) {
    for (const length of lengths) {
      const r = rng(length * 31 + (variant === 'pooled' ? 1 : 0));
      const synth = (from: RunRecord[], len: number) => {
        const first = from[Math.floor(r() * from.length)]!;
        const pick =
          variant === 'per-run'
            ? () => prep.get(first)!
            : () => prep.get(from[Math.floor(r() * from.length)]!)!;
        return syntheticRun(grid, pick, len, BLOCK, r);
      };
      const row: BootstrapRow = {
        shape,
        variant,
        windows: length,
        seconds: length * windowS,
        requestsPerSide: Math.round(length * reqPerWindow),
        fixed: {},
        ab: {},
        draws,
      };
      const heads: Array<[string, RunRecord[]]> = [
        ['A/A', a],
        ...factors.map((f): [string, RunRecord[]] => [`+${Math.round((f - 1) * 100)}%`, cell(f)]),
      ];
      for (const [kind, h] of heads) {
        if (h.length === 0) continue;
        let reg = 0;
        for (let d = 0; d < draws; d++) {
          const b = synth(a, length);
          const x = synth(h, length);
          const worse = (id: 'p95' | 'p99') =>
            judgeChange(b[id], x[id], 'lower', DEFAULT_TOLERANCES[id], 'ms') === 'worse';
          if (worse('p95') || worse('p99')) reg++;
        }
        row.fixed[kind] = { regressed: reg / draws };
        // A/B rounds: K rounds of length/K windows; round k pairs the A and head runs of one real round.
        const perRound = Math.max(1, Math.round(length / abRounds));
        const byRound = new Map(h.map((x) => [x.round, x]));
        const paired =
          kind === 'A/A'
            ? a.slice(0, -1).map((x, i) => [x, a[i + 1]!] as const)
            : a.filter((x) => byRound.has(x.round)).map((x) => [x, byRound.get(x.round)!] as const);
        if (paired.length === 0) continue;
        let abReg = 0;
        let abInc = 0;
        for (let d = 0; d < draws; d++) {
          const ratios = Array.from({ length: abRounds }, () => {
            const [x, y] = paired[Math.floor(r() * paired.length)]!;
            return synth([y], perRound).p95 / synth([x], perRound).p95;
          });
          const v = pairedTTest(ratios);
          if (v === 'regressed') abReg++;
          if (v === 'inconclusive') abInc++;
        }
        row.ab[kind] = { regressed: abReg / draws, inconclusive: abInc / draws };
      }
      out.push(row);
    }
  }
  return out;
}
