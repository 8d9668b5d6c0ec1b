/**
 * The vocabulary of judging one metric, shared by the comparison with a baseline (compare.ts) and
 * the noise gate (noise.ts): the key metrics, their directions and tolerances, the fixed rule
 * ({@link judgeChange}), the shape of the noise gate's verdict and of the three-way verdict of
 * src/compare/significance.ts. Pure, no I/O.
 */

/** The key metrics that are compared and can gate the check. */
export const METRIC_IDS = ['rps', 'p50', 'p90', 'p95', 'p99', 'error-rate', 'checks'] as const;
export type MetricId = (typeof METRIC_IDS)[number];

/** Which way is better. */
export type Direction = 'higher' | 'lower';

/** The unit of a metric's absolute tolerance. */
export type ToleranceUnit = 'ms' | 'pp' | '/s';

/**
 * How much a metric may move before the change counts.
 * - `relativePct`: percent of the base value (10 = 10%);
 * - `absolute`: the noise floor in the metric's {@link ToleranceUnit} (ms for latency,
 *   percentage points for rates, requests per second for RPS).
 */
export interface Tolerance {
  relativePct: number;
  absolute: number;
}

/** Tolerances for every key metric. */
export type Tolerances = Record<MetricId, Tolerance>;

/**
 * Defaults: latency 10% and 1 ms (p99 15% and 2 ms: the tail is noisier), RPS 10% and 1/s,
 * error rate 10% and 0.1 pp, checks 0.5% and 0.1 pp.
 */
export const DEFAULT_TOLERANCES: Tolerances = {
  rps: { relativePct: 10, absolute: 1 },
  p50: { relativePct: 10, absolute: 1 },
  p90: { relativePct: 10, absolute: 1 },
  p95: { relativePct: 10, absolute: 1 },
  p99: { relativePct: 15, absolute: 2 },
  'error-rate': { relativePct: 10, absolute: 0.1 },
  checks: { relativePct: 0.5, absolute: 0.1 },
};

/** The metrics that gate the check unless the `gate` input says otherwise. */
export const DEFAULT_GATE: MetricId[] = ['rps', 'p95', 'p99', 'error-rate', 'checks'];

/** `better`/`worse` beyond tolerance, `unchanged` within it, `missing` when either side has no value. */
export type Change = 'better' | 'worse' | 'unchanged' | 'missing';

const scaleOf = (unit: ToleranceUnit) => (unit === 'pp' ? 0.01 : 1);

/**
 * Judges one change with the rule above.
 * @param base the baseline value, in the result's unit (ms, /s, or a fraction for rates).
 * @param head the head value, same unit.
 * @param unit the unit of `tolerance.absolute` (pp are converted to fractions here).
 */
export function judgeChange(
  base: number | undefined,
  head: number | undefined,
  direction: Direction,
  tolerance: Tolerance,
  unit: ToleranceUnit,
): Change {
  if (base === undefined || head === undefined || !Number.isFinite(base) || !Number.isFinite(head))
    return 'missing';
  const delta = head - base;
  const relativePct =
    base === 0 ? (delta === 0 ? 0 : Number.POSITIVE_INFINITY) : (Math.abs(delta) / Math.abs(base)) * 100;
  // A tiny epsilon keeps 0.1 + 0.2 style rounding from turning "exactly at the tolerance" into a change.
  const beyondAbsolute = Math.abs(delta) > tolerance.absolute * scaleOf(unit) + 1e-12;
  const beyondRelative = relativePct > tolerance.relativePct + 1e-9;
  if (!beyondAbsolute || !beyondRelative) return 'unchanged';
  const worse = direction === 'lower' ? delta > 0 : delta < 0;
  return worse ? 'worse' : 'better';
}

/** What a metric's history says is normal, in the metric's own unit (ms, /s, or a fraction for rates). */
export interface NormalRange {
  median: number;
  /** Median absolute deviation from the median. */
  mad: number;
  /** `median - k × 1.4826 × MAD`. */
  low: number;
  /** `median + k × 1.4826 × MAD`. */
  high: number;
  /** How many runs it was computed from. */
  runs: number;
}

/** The verdict of `judgeWithHistory` (noise.ts). */
export interface NoiseVerdict {
  /** `true` when head is a regression by the method used. */
  regressed: boolean;
  /** `history` when the history was large enough, `fixed` when the fixed rule alone judged. */
  method: 'history' | 'fixed';
  /**
   * One line naming the method for the comment, e.g.
   * `history: median 41.00ms, normal range 38.00ms–44.00ms over 10 runs` or
   * `fixed tolerance 10% and 1 ms; history of 3 runs, 5 needed`.
   */
  text: string;
  /** The floors' judgement: head against the history's median (`history`) or the baseline (`fixed`). */
  change: Change;
  /** Head relative to what it was judged against (median or baseline), in percent; absent when not computable. */
  deltaPct?: number;
  /** `true` when head lies on the bad side outside the normal range (`history` only). */
  outsideRange?: boolean;
  range?: NormalRange;
}

/** A key metric's three-way verdict. */
export type MetricVerdict = 'regressed' | 'no-regression' | 'improved' | 'inconclusive';

/** How the noise of a change was modelled, for the comment. */
export interface NoiseModel {
  /** `history`: τ from the base branch's runs; `default`: `DEFAULT_BETWEEN_RUN_NOISE` (significance.ts). */
  source: 'history' | 'default';
  /** τ, the between-run sd of one run's value, in the metric's unit. */
  betweenRunSd: number;
  /** The in-run sd of the change (√(s_head² + s_base²), bad side), in the metric's unit. */
  inRunSd: number;
  /** Which runs carried their own interval; a side without one borrows the other's (relative). */
  inRun: 'both' | 'head' | 'base' | 'none';
  /** With `history`: runs used, their median and robust sd (unit of the metric). */
  history?: { runs: number; median: number; sd: number };
  /** One line: `in-run 95% intervals + between-run noise ±2.0% (default floor)`. */
  text: string;
}

/** The statistical judgement of one key metric (on {@link MetricDelta.judgement}). */
export interface MetricJudgement {
  verdict: MetricVerdict;
  /** The tolerance T in the metric's unit (a fraction for rates). */
  tolerance: number;
  /** Δ's interval (head − base): each end the one-sided `NO_REGRESSION_CONFIDENCE` (significance.ts) bound. */
  interval: [number, number];
  noise: NoiseModel;
  /** With `inconclusive`: what would settle it (longer run, more runners, A/B rounds). */
  settle?: string;
  /** With `settle`: how many times the requests per side it asks for (Infinity: only A/B rounds). */
  settleFactor?: number;
}
