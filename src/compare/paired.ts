import type {
  AbFigures,
  AbSide,
  PairedJudgement,
  PairedMetric,
  PairedVerdictWord,
} from '../result/ab-schema.ts';
import {
  DEFAULT_GATE,
  DEFAULT_TOLERANCES,
  type Direction,
  type MetricId,
  type Tolerances,
} from './judgement.ts';
import { studentTQuantile } from './student-t.ts';

/**
 * The paired judgement of interleaved A/B rounds. Pure, no I/O; the calibration benchmark calls
 * {@link judgePairedRounds} directly.
 *
 * Method (docs/how-it-works.md, "A/B rounds"): consecutive rounds form pairs (1-2, 3-4, …), which
 * in ABBA order are A-B, B-A, A-B, …, so a slow drift of the machine adds to one pair what it takes
 * from the next. Per metric, each pair gives one change: `ln(B/A)` for latency and RPS (the log
 * scale: a ratio, whatever the metric's size), `B - A` for the error and check rates (fractions
 * that are often 0). Their mean gets a two-sided Student t interval at `level` (n - 1 degrees of
 * freedom, n pairs). With `tol` the metric's tolerance (the larger of its relative one and its
 * absolute floor over A's median, as judgeChange counts a change only beyond both):
 * - `regressed`: the whole interval lies on the worse side of no change (significant at the level) and
 *   the mean change is worse than the tolerance;
 * - `no regression`: the interval's worse end lies within the tolerance;
 * - `inconclusive`: anything else (more rounds would narrow the interval), and always when fewer
 *   than 2 pairs were made, a figure is missing from some rounds, or any round's load generator
 *   saturated. A metric no round measured (a script without checks) is not gated.
 */

/** One round as the judgement needs it. */
export interface PairedRoundInput {
  /** 1-based running order. */
  round: number;
  side: AbSide;
  figures: AbFigures;
  saturated: boolean;
  /** Why it saturated (shown in the reason). */
  saturationReasons?: readonly string[];
}

/** Options of {@link judgePairedRounds}. */
export interface PairedOptions {
  /** Two-sided confidence level, in (0, 1). Default {@link DEFAULT_PAIRED_LEVEL}. */
  level?: number;
  /** Default DEFAULT_TOLERANCES (src/compare/judgement.ts). */
  tolerances?: Tolerances;
  /** The metrics that decide the overall verdict. Default DEFAULT_GATE. */
  gate?: readonly MetricId[];
}

/** The default confidence level: 95%, two-sided (a false `regressed` at most 2.5% of the time). */
export const DEFAULT_PAIRED_LEVEL = 0.95;

interface PairedMetricDef {
  id: MetricId;
  label: string;
  direction: Direction;
  scale: 'log' | 'difference';
  /** The factor from the tolerance's `absolute` to the figure's unit (pp -> fraction). */
  absoluteScale: number;
}

const PAIRED_METRICS: PairedMetricDef[] = [
  { id: 'rps', label: 'Requests per second', direction: 'higher', scale: 'log', absoluteScale: 1 },
  { id: 'p50', label: 'Latency p50', direction: 'lower', scale: 'log', absoluteScale: 1 },
  { id: 'p90', label: 'Latency p90', direction: 'lower', scale: 'log', absoluteScale: 1 },
  { id: 'p95', label: 'Latency p95', direction: 'lower', scale: 'log', absoluteScale: 1 },
  { id: 'p99', label: 'Latency p99', direction: 'lower', scale: 'log', absoluteScale: 1 },
  { id: 'error-rate', label: 'Error rate', direction: 'lower', scale: 'difference', absoluteScale: 0.01 },
  { id: 'checks', label: 'Checks passed', direction: 'higher', scale: 'difference', absoluteScale: 0.01 },
];

/** The median of a non-empty list. */
function median(values: readonly number[]): number {
  const s = [...values].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Consecutive rounds in running order, two by two, as [A, B]; an unpaired last round is left out. */
export function pairRounds<T extends { round: number; side: AbSide }>(rounds: readonly T[]): Array<[T, T]> {
  const sorted = [...rounds].sort((x, y) => x.round - y.round);
  const pairs: Array<[T, T]> = [];
  for (let i = 0; i + 1 < sorted.length; i += 2) {
    const [x, y] = [sorted[i]!, sorted[i + 1]!];
    if (x.side === y.side) continue;
    pairs.push(x.side === 'A' ? [x, y] : [y, x]);
  }
  return pairs;
}

/** A signed change as text: `+12.3%` for a ratio, `+0.50 pp` for a difference of fractions. */
function changeText(value: number, scale: 'log' | 'difference'): string {
  const v = scale === 'log' ? (value - 1) * 100 : value * 100;
  const sign = v > 0 ? '+' : v < 0 ? '−' : '±';
  return `${sign}${Math.abs(v).toFixed(scale === 'log' ? 1 : 2)}${scale === 'log' ? '%' : ' pp'}`;
}

/** Judges one metric over the pairs (see the file's comment). */
function judgeMetric(
  def: PairedMetricDef,
  pairs: ReadonlyArray<[PairedRoundInput, PairedRoundInput]>,
  saturation: string | undefined,
  options: Required<PairedOptions>,
): PairedMetric {
  const gated = options.gate.includes(def.id);
  const base = { id: def.id, label: def.label, direction: def.direction, scale: def.scale, gated };
  const inconclusive = (reason: string, changes: number[] = []): PairedMetric => ({
    ...base,
    changes,
    ...(changes.length ? { median: median(changes) } : {}),
    verdict: 'inconclusive',
    reason,
  });
  const values = pairs.map(([a, b]) => [a.figures[def.id], b.figures[def.id]] as const);
  // Not measured at all (a script without checks): nothing to judge, and it decides nothing.
  if (values.every(([a, b]) => a === undefined && b === undefined))
    return { ...inconclusive('not measured in any round'), gated: false };
  const usable = values.every(
    ([a, b]) => a !== undefined && b !== undefined && (def.scale === 'difference' || (a > 0 && b > 0)),
  );
  if (!usable) return inconclusive(`no ${def.scale === 'log' ? 'positive ' : ''}value in every round`);
  const pairsOf = values as ReadonlyArray<readonly [number, number]>;
  const changes = pairsOf.map(([a, b]) => (def.scale === 'log' ? b / a : b - a));
  if (saturation) return inconclusive(saturation, changes);
  if (pairs.length < 2)
    return inconclusive(
      `${pairs.length} pair of rounds: an interval needs at least 2 pairs (4 rounds); run more rounds`,
      changes,
    );
  // In "worse" space: positive is worse, whatever the direction.
  const sign = def.direction === 'lower' ? 1 : -1;
  const xs = pairsOf.map(([a, b]) => sign * (def.scale === 'log' ? Math.log(b / a) : b - a));
  const n = xs.length;
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  const half = studentTQuantile(1 - (1 - options.level) / 2, n - 1) * (sd / Math.sqrt(n));
  const tolerance = options.tolerances[def.id];
  const baseMedian = Math.abs(median(pairsOf.map(([a]) => a)));
  const absolute = tolerance.absolute * def.absoluteScale;
  const relative = tolerance.relativePct / 100;
  // The worse side's limit in worse space, and shown in the changes' own form.
  let limitW: number;
  let limit: number;
  if (def.scale === 'log') {
    const tol = Math.max(relative, baseMedian > 0 ? absolute / baseMedian : 0);
    limit = def.direction === 'lower' ? 1 + tol : Math.max(1 - tol, 1e-9);
    limitW = sign * Math.log(limit);
  } else {
    const tol = Math.max(absolute, relative * baseMedian);
    limit = sign * tol;
    limitW = tol;
  }
  const shown = (w: number) => (def.scale === 'log' ? Math.exp(sign * w) : sign * w);
  const [low, high] = [shown(mean - half), shown(mean + half)].sort((x, y) => x - y) as [number, number];
  const level = `${Math.round(options.level * 1000) / 10}%`;
  const interval = `${level} interval ${changeText(low, def.scale)} to ${changeText(high, def.scale)}`;
  const limitText = `the ${changeText(limit, def.scale)} tolerance`;
  let verdict: PairedVerdictWord;
  let reason: string;
  if (mean - half > 0 && mean > limitW) {
    verdict = 'regressed';
    reason = `B is worse by a mean ${changeText(shown(mean), def.scale)} (${interval}), beyond ${limitText}`;
  } else if (mean + half <= limitW) {
    verdict = 'no regression';
    reason = `the ${interval} stays within ${limitText}`;
  } else {
    verdict = 'inconclusive';
    reason = `the ${interval} reaches past ${limitText}: more rounds would settle it`;
  }
  return { ...base, changes, median: median(changes), mean: shown(mean), low, high, limit, verdict, reason };
}

/**
 * Judges A/B rounds pair by pair (the method is in this file's comment).
 * @param rounds every round run, in any order (paired by `round`).
 * @returns the judgement of every key metric and the overall verdict over the gated ones.
 * @throws RangeError when `level` is not in (0, 1).
 */
export function judgePairedRounds(
  rounds: readonly PairedRoundInput[],
  options: PairedOptions = {},
): PairedJudgement {
  const level = options.level ?? DEFAULT_PAIRED_LEVEL;
  if (!(level > 0 && level < 1)) throw new RangeError(`paired level must be in (0, 1), got ${level}`);
  const full: Required<PairedOptions> = {
    level,
    tolerances: options.tolerances ?? DEFAULT_TOLERANCES,
    gate: options.gate ?? DEFAULT_GATE,
  };
  const pairs = pairRounds(rounds);
  const saturated = [...rounds].sort((x, y) => x.round - y.round).filter((r) => r.saturated);
  const saturation = saturated.length
    ? `the load generator saturated in round ${saturated.map((r) => `${r.round} (${r.side})`).join(', ')}` +
      `${saturated[0]!.saturationReasons?.[0] ? `: ${saturated[0]!.saturationReasons[0]}` : ''}; ` +
      'it measured itself, not the target: give it more VUs or runners'
    : undefined;
  const metrics = PAIRED_METRICS.map((def) => judgeMetric(def, pairs, saturation, full));
  const gated = metrics.filter((m) => m.gated);
  const regressed = gated.filter((m) => m.verdict === 'regressed');
  const unsure = gated.filter((m) => m.verdict === 'inconclusive');
  const verdict: PairedVerdictWord = regressed.length
    ? 'regressed'
    : unsure.length
      ? 'inconclusive'
      : 'no regression';
  const reason = regressed.length
    ? regressed.map((m) => `${m.label}: ${m.reason}`).join('; ')
    : unsure.length
      ? (saturation ?? unsure.map((m) => `${m.label}: ${m.reason}`).join('; '))
      : gated.length
        ? 'every gated metric stays within its tolerance'
        : 'no metric is gated';
  return {
    reference: 'paired rounds',
    level,
    rounds: rounds.length,
    pairs: pairs.length,
    verdict,
    reason,
    metrics,
  };
}
