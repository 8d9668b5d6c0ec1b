import type { RunResult } from '../../src/result/schema.ts';
import type { Judges, Round, Verdict } from './judges.ts';
import { factorLabel } from './plan.ts';
import { p95Of, type RunRecord, requestsOf } from './runs.ts';
import { clusterUpper, rng } from './stats.ts';

/**
 * Judges the stored real runs with every mode: every ordered pair of runs for the fixed rule, the
 * history gate and the in-run uncertainty; ABBA blocks of K consecutive rounds for A/B rounds.
 */

/** Verdict counts of one comparison kind in one mode. */
export interface Tally {
  n: number;
  regressed: number;
  inconclusive: number;
  pass: number;
  other: number;
  /** Upper 95% bound of the regressed share, cluster bootstrap over runs (A/A rows). */
  regressedUpper95?: number;
  /** Median requests per side (per trial for A/B rounds: K × a run's). */
  requestsPerSide: number;
}

/** One row: a comparison kind (A/A, +5%, …, saturated) in one mode. */
export interface Row {
  shape: string;
  mode: 'fixed' | 'history' | 'in-run' | 'ab-rounds' | 'ab-rounds (resampled)';
  kind: string;
  /** Measured p95 change of the head cell against the A cell (median over runs), fraction. */
  measuredP95Change?: number;
  /** Runs of the head cell (A/A: of the A cell) whose generator saturated: `k of n`. */
  saturatedRuns?: string;
  tally: Tally;
}

const HISTORY = 5;

function tally(verdicts: Verdict[], requestsPerSide: number): Tally {
  const t: Tally = { n: verdicts.length, regressed: 0, inconclusive: 0, pass: 0, other: 0, requestsPerSide };
  for (const v of verdicts) t[v]++;
  return t;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2 : Number.NaN;
};
const medianRequests = (rs: RunRecord[]) => median(rs.map(requestsOf));

/** A/A over every ordered pair i ≠ j; otherwise every (base, head) pair. */
function pairs(base: RunRecord[], head: RunRecord[], same: boolean): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < base.length; i++)
    for (let j = 0; j < head.length; j++) if (!same || i !== j) out.push([i, j]);
  return out;
}

/** The history of a pair: the next HISTORY A runs after the base in round order, leaving out base and head. */
function historyFor(a: RunRecord[], bi: number, exclude: RunRecord): RunResult[] {
  const out: RunResult[] = [];
  for (let k = 1; k < a.length && out.length < HISTORY; k++) {
    const r = a[(bi + k) % a.length]!;
    if (r !== exclude) out.push(r.result);
  }
  return out;
}

/**
 * Rounds paired by round number (A_r with H_r); with `aa`, A_r with A_{r+1}, an A/A of rounds
 * (consecutive pairs share a run: a trial's rounds are then not independent, which makes its
 * spread, and so its verdicts, a little too confident rather than too cautious).
 */
function roundPairs(a: RunRecord[], head: RunRecord[], aa: boolean): Round[] {
  if (aa) return a.slice(0, -1).map((x, i) => ({ a: x.result, b: a[i + 1]!.result }));
  const byRound = new Map(head.map((h) => [h.round, h]));
  return a.filter((x) => byRound.has(x.round)).map((x) => ({ a: x.result, b: byRound.get(x.round)!.result }));
}

/** Judges one shape's cells in every mode. */
export function evaluateShape(
  shape: string,
  runs: RunRecord[],
  judges: Judges,
  abRounds: number,
  resampleDraws: number,
): Row[] {
  const byCell = (id: string) => runs.filter((r) => r.cell === id).sort((x, y) => x.round - y.round);
  const a = byCell(`${shape}×1.00`);
  if (a.length < 2) return [];
  const heads: Array<{ kind: string; runs: RunRecord[] }> = [{ kind: 'A/A', runs: a }];
  const factors = [
    ...new Set(runs.filter((r) => r.shape === shape && !r.saturated && r.factor !== 1).map((r) => r.factor)),
  ].sort();
  for (const f of factors)
    heads.push({ kind: `+${Math.round((f - 1) * 100)}%`, runs: byCell(`${shape}×${factorLabel(f)}`) });
  const sat = runs.filter((r) => r.saturated && r.shape === shape).sort((x, y) => x.round - y.round);
  const rows: Row[] = [];
  const ok = (rs: RunRecord[]) => rs.filter((r) => !r.result.loadGenerator?.saturated);
  const a95 = median(ok(a).map((r) => p95Of(r) ?? Number.NaN));
  const modes: Array<
    ['fixed' | 'history' | 'in-run', (b: number, h: RunRecord, hr: RunRecord[]) => Verdict]
  > = [
    ['fixed', (b, h) => judges.fixed(a[b]!.result, h.result)],
    ['history', (b, h) => judges.history(a[b]!.result, h.result, historyFor(a, b, h))],
  ];
  if (judges.hasInRun) modes.push(['in-run', (b, h) => judges.inRun(a[b]!.result, h.result)]);
  for (const [mode, judgeOne] of modes) {
    for (const { kind, runs: hr } of heads) {
      const same = kind === 'A/A';
      const ps = pairs(a, hr, same);
      const matrix = new Map<string, Verdict>();
      const verdicts = ps.map(([i, j]) => {
        const v = judgeOne(i, hr[j]!, hr);
        matrix.set(`${i},${j}`, v);
        return v;
      });
      const t = tally(verdicts, medianRequests([...a, ...hr]));
      if (same)
        t.regressedUpper95 = clusterUpper(
          a.length,
          a.length,
          (i, j) => matrix.get(`${i},${j}`) === 'regressed',
          true,
        );
      rows.push({
        shape,
        mode,
        kind,
        measuredP95Change: median(ok(hr).map((r) => p95Of(r) ?? Number.NaN)) / a95 - 1,
        saturatedRuns: `${hr.length - ok(hr).length} of ${hr.length}`,
        tally: t,
      });
    }
    if (sat.length > 0) {
      // Saturated on either side: A base with a saturated head, and a saturated base with an A head.
      const verdicts = [
        ...a.flatMap((x) =>
          sat.map((s) => (mode === 'in-run' ? judges.inRun : judges.fixed)(x.result, s.result)),
        ),
        ...sat.flatMap((s) =>
          a.map((x) => (mode === 'in-run' ? judges.inRun : judges.fixed)(s.result, x.result)),
        ),
      ];
      if (mode !== 'history')
        rows.push({ shape, mode, kind: 'saturated', tally: tally(verdicts, medianRequests(sat)) });
    }
  }
  // A/B rounds: non-overlapping blocks of K rounds (ABBA across rounds), and a resampling of rounds.
  const abKinds = [...heads.map((h) => ({ kind: h.kind, rounds: roundPairs(a, h.runs, h.kind === 'A/A') }))];
  if (sat.length > 0) abKinds.push({ kind: 'saturated', rounds: roundPairs(a, sat, false) });
  for (const { kind, rounds } of abKinds) {
    const k = Math.min(abRounds, rounds.length);
    if (k < 2) continue;
    const trials: Verdict[] = [];
    for (let s = 0; s + k <= rounds.length; s += k) trials.push(judges.paired(rounds.slice(s, s + k)));
    const perSide = k * medianRequests(a);
    const change =
      kind === 'A/A' || kind === 'saturated'
        ? undefined
        : rows.find((r) => r.kind === kind)?.measuredP95Change;
    rows.push({
      shape,
      mode: 'ab-rounds',
      kind,
      ...(change === undefined ? {} : { measuredP95Change: change }),
      tally: tally(trials, perSide),
    });
    const r = rng(11);
    const resampled = Array.from({ length: resampleDraws }, () =>
      judges.paired(Array.from({ length: k }, () => rounds[Math.floor(r() * rounds.length)]!)),
    );
    rows.push({ shape, mode: 'ab-rounds (resampled)', kind, tally: tally(resampled, perSide) });
  }
  return rows;
}
