import { formatMs, formatPercent, formatRate } from '../render/format.ts';
import type { NoiseVerdict, NormalRange } from './judgement.ts';
import { type Direction, judgeChange, type Tolerance, type ToleranceUnit } from './judgement.ts';

/**
 * A regression gate that knows the noise: the head value counts as a regression only when it lies
 * outside what the base branch's history says is normal for the metric AND the change beyond the
 * history's median also passes the existing relative and absolute tolerances (the floors of
 * `judgeChange`). With fewer than `minHistory` usable runs the fixed rule judges head against the
 * baseline run alone, as before.
 *
 * The statistic: median and MAD (median absolute deviation), normal range
 * `median ± k × 1.4826 × MAD` (1.4826 makes the MAD estimate the standard deviation of normal
 * noise; k = 3 is the Hampel identifier). Chosen over an IQR fence because with the ~10 runs a
 * history holds, quartiles rest on 2–3 points each and an IQR fence only tolerates 25%
 * contamination, while the median and the MAD tolerate up to half the runs being outliers (a run on
 * a noisy node, an outage); both are cheap and explainable in one line. The false-positive and
 * detection rates against synthetic histories are measured by `bench/noise.ts`.
 * Only the bad side counts: a p95 below the range or RPS above it is not a regression.
 */

/** Options of the history gate. */
export interface NoiseGateOptions {
  /** Below this many usable history runs the fixed rule applies. */
  minHistory: number;
  /** Half-width of the normal range in robust standard deviations (1.4826 × MAD). */
  k: number;
}

/** Defaults: at least 5 runs (a MAD from fewer swings too much), k = 3. */
export const DEFAULT_NOISE_GATE: NoiseGateOptions = { minHistory: 5, k: 3 };

/** 1 / Φ⁻¹(3/4): scales the MAD to the standard deviation of normally distributed noise. */
const MAD_TO_SD = 1.4826;

/** The median of values (NaN for none). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const mid = Math.floor(n / 2);
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The normal range of a history (non-finite values are left out).
 * @throws RangeError when no finite value is left.
 */
export function normalRange(history: readonly number[], k = DEFAULT_NOISE_GATE.k): NormalRange {
  const values = history.filter(Number.isFinite);
  if (values.length === 0) throw new RangeError('normalRange needs at least one finite value');
  const m = median(values);
  const mad = median(values.map((v) => Math.abs(v - m)));
  const half = k * MAD_TO_SD * mad;
  return { median: m, mad, low: m - half, high: m + half, runs: values.length };
}

/** One metric's inputs to {@link judgeWithHistory}. All values in the result's unit (ms, /s, fraction). */
export interface HistoryInput {
  /** The metric's value in the base branch's last successful runs (any order; non-finite values skipped). */
  history: readonly number[];
  /** The baseline run's value (the fixed rule's base); defaults to the history's last value. */
  base?: number;
  head: number | undefined;
  direction: Direction;
  /** The existing floors of the metric (relative % and absolute in `unit`). */
  tolerance: Tolerance;
  unit: ToleranceUnit;
}

/** A value in a tolerance unit: ms, a fraction shown as %, or per second. */
export function formatInUnit(value: number, unit: ToleranceUnit): string {
  if (unit === 'ms') return formatMs(value);
  if (unit === 'pp') return formatPercent(value);
  return formatRate(value);
}

function relative(base: number | undefined, head: number | undefined): { deltaPct?: number } {
  if (
    base === undefined ||
    head === undefined ||
    base === 0 ||
    !Number.isFinite(base) ||
    !Number.isFinite(head)
  )
    return {};
  return { deltaPct: ((head - base) / Math.abs(base)) * 100 };
}

/**
 * One line for the comment: the metric, its change against what it was judged on, and the method,
 * e.g. `p95 +12.0% (history: median 41.00ms, normal range 38.00ms–44.00ms over 10 runs)`.
 */
export function describeNoiseVerdict(label: string, verdict: NoiseVerdict): string {
  const d = verdict.deltaPct;
  const change = d === undefined ? '' : ` ${d > 0 ? '+' : d < 0 ? '-' : '±'}${Math.abs(d).toFixed(1)}%`;
  return `${label}${change} (${verdict.text})`;
}

function toleranceText(tolerance: Tolerance, unit: ToleranceUnit): string {
  return `${tolerance.relativePct}% and ${tolerance.absolute} ${unit}`;
}

/**
 * Judges head against the history (see the module's rule). `regressed` needs both: head outside
 * the normal range on the bad side, and `judgeChange(median, head)` = `worse` by the floors.
 */
export function judgeWithHistory(
  input: HistoryInput,
  options: NoiseGateOptions = DEFAULT_NOISE_GATE,
): NoiseVerdict {
  const { head, direction, tolerance, unit } = input;
  const usable = input.history.filter(Number.isFinite);
  if (usable.length < options.minHistory) {
    const base = input.base ?? usable.at(-1);
    const change = judgeChange(base, head, direction, tolerance, unit);
    return {
      regressed: change === 'worse',
      method: 'fixed',
      change,
      ...relative(base, head),
      text: `fixed tolerance ${toleranceText(tolerance, unit)}; history of ${usable.length} runs, ${options.minHistory} needed`,
    };
  }
  const range = normalRange(usable, options.k);
  const change = judgeChange(range.median, head, direction, tolerance, unit);
  const outsideRange =
    head !== undefined &&
    Number.isFinite(head) &&
    (direction === 'lower' ? head > range.high : head < range.low);
  // Latency, RPS and rates are never negative: the shown range starts at 0 at the lowest.
  const low = Math.max(range.low, 0);
  return {
    regressed: outsideRange && change === 'worse',
    method: 'history',
    change,
    ...relative(range.median, head),
    outsideRange,
    range,
    text:
      `history: median ${formatInUnit(range.median, unit)}, normal range ` +
      `${formatInUnit(low, unit)}–${formatInUnit(range.high, unit)} over ${range.runs} runs`,
  };
}
