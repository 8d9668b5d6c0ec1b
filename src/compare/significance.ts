import { K6_METRIC } from '../k6/metrics.ts';
import type { RunResult } from '../result/schema.ts';
import { normalQuantile, wilsonInterval, zOfLevel } from '../result/uncertainty.ts';
import { type Estimate, type Uncertainty, uncertaintySchema } from '../result/uncertainty-schema.ts';
import { type Comparison, type MetricDelta, worstFirst } from './compare.ts';
import { metricHistory } from './history.ts';
import type { MetricId, MetricJudgement, MetricVerdict, NoiseModel, ToleranceUnit } from './judgement.ts';
import { DEFAULT_NOISE_GATE, median } from './noise.ts';

/**
 * The three-way verdict of one key metric: `regressed`, `no-regression` or `inconclusive` (and
 * `improved`, the mirror of `regressed`). Pure, no I/O; docs/how-it-works.md ("The verdict") says it
 * for users.
 *
 * The model: each run's figure is the true value plus in-run sampling noise (its own interval,
 * `RunResult.uncertainty`, src/result/uncertainty.ts) plus between-run noise of sd τ (the machine,
 * the node, the time of day: what in-run intervals cannot see). So the change Δ = head − base has
 * variance s_head² + s_base² + 2τ². τ comes from the base branch's history when it has at least
 * {@link MIN_HISTORY_FOR_NOISE} comparable runs (their robust spread 1.4826 × MAD, less their own
 * in-run part, never under half the default), else from {@link DEFAULT_BETWEEN_RUN_NOISE}.
 *
 * With T the metric's tolerance (the larger of its relative and absolute parts, measured from base):
 * - `regressed`: Δ is beyond T on the bad side AND significantly bad: the one-sided
 *   {@link REGRESSION_CONFIDENCE} bound of Δ nearest zero is still on the bad side;
 * - `no-regression`: the one-sided {@link NO_REGRESSION_CONFIDENCE} bound of Δ on the bad side is
 *   within T (an equivalence test, as TOST): the change is shown to be within the tolerance;
 * - `improved`: the mirror of `regressed` (counted as no regression);
 * - `inconclusive`: anything else; it says what would settle it.
 */

/** Confidence (one-sided) that a regression is not noise: a false alarm in at most 1% of A/A comparisons. */
export const REGRESSION_CONFIDENCE = 0.99;
/** Confidence (one-sided) that the change lies within the tolerance, for `no-regression`. */
export const NO_REGRESSION_CONFIDENCE = 0.95;
/** Comparable history runs needed before their spread replaces the default between-run noise. */
export const MIN_HISTORY_FOR_NOISE = DEFAULT_NOISE_GATE.minHistory;

/** A between-run noise: sd = max(relative × |value|, absolute), in the metric's unit (a fraction for rates). */
export interface NoiseFloor {
  relative: number;
  absolute: number;
}

/**
 * The default between-run noise (one run's sd from run to run on one machine, beyond its own
 * in-run interval) used when there is no history: latency 2% (p99 3%), RPS 1%, rates 0.01 pp.
 * A stated floor for the calibration benchmark to tune (bench/calibration*.ts).
 */
export const DEFAULT_BETWEEN_RUN_NOISE: Record<MetricId, NoiseFloor> = {
  rps: { relative: 0.01, absolute: 0 },
  p50: { relative: 0.02, absolute: 0 },
  p90: { relative: 0.02, absolute: 0 },
  p95: { relative: 0.02, absolute: 0 },
  p99: { relative: 0.03, absolute: 0 },
  'error-rate': { relative: 0, absolute: 0.0001 },
  checks: { relative: 0, absolute: 0.0001 },
};

/**
 * The verdict's knobs, for the calibration benchmark to tune without editing the defaults: the two
 * one-sided levels, the between-run noise floors and the history needed to replace them.
 */
export interface VerdictModel {
  regressionConfidence: number;
  noRegressionConfidence: number;
  betweenRunNoise: Record<MetricId, NoiseFloor>;
  minHistory: number;
}

/** The report's model: {@link REGRESSION_CONFIDENCE}, {@link NO_REGRESSION_CONFIDENCE}, {@link DEFAULT_BETWEEN_RUN_NOISE}, {@link MIN_HISTORY_FOR_NOISE}. */
export const DEFAULT_VERDICT_MODEL: VerdictModel = {
  regressionConfidence: REGRESSION_CONFIDENCE,
  noRegressionConfidence: NO_REGRESSION_CONFIDENCE,
  betweenRunNoise: DEFAULT_BETWEEN_RUN_NOISE,
  minHistory: MIN_HISTORY_FOR_NOISE,
};

/** The validated uncertainty of a result, or undefined (older result, or a shape this version does not know). */
export function uncertaintyOf(result: RunResult): Uncertainty | undefined {
  const parsed = uncertaintySchema.safeParse(result.uncertainty);
  return parsed.success ? parsed.data : undefined;
}

/** A key metric's interval in a result's uncertainty; undefined when the result has none. */
export function keyMetricEstimate(result: RunResult, id: MetricId, latencyKey: string): Estimate | undefined {
  const u = uncertaintyOf(result);
  if (u) {
    if (id === 'rps') return u.rps;
    if (id === 'error-rate') return u.errorRate;
    if (id === 'checks') return u.checks;
    const e = u.latency[latencyKey]?.[id];
    if (e) return e;
  }
  // Rates carry their counts: an older result still gets Wilson's interval (without a design effect).
  const key = id === 'error-rate' ? K6_METRIC.httpReqFailed : id === 'checks' ? K6_METRIC.checks : undefined;
  const v = key ? result.metrics[key]?.values : undefined;
  return v ? wilsonInterval(v.passes ?? 0, (v.passes ?? 0) + (v.fails ?? 0)) : undefined;
}

/** Standard errors down and up of a value from its estimate (scaled to `value` for ms and /s). */
function sidesOf(
  estimate: Estimate | undefined,
  value: number,
  unit: ToleranceUnit,
  level: number,
): { down: number; up: number } | undefined {
  if (!estimate) return undefined;
  const z = zOfLevel(level);
  const down = Math.max(0, estimate.value - estimate.low) / z;
  const up = Math.max(0, estimate.high - estimate.value) / z;
  if (unit === 'pp' || !(estimate.value > 0)) return { down, up };
  const scale = value / estimate.value;
  return { down: down * scale, up: up * scale };
}

/** What {@link judgeMetric} needs beyond the row. */
export interface MetricContext {
  head: RunResult;
  base: RunResult;
  latencyKey: string;
  /** The metric's values in comparable history runs, with each run's interval when it has one. */
  history: ReadonlyArray<{ value: number; estimate?: Estimate; level?: number }>;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function noiseText(m: Omit<NoiseModel, 'text'>, unit: ToleranceUnit, base: number, level: number): string {
  const inRun =
    m.inRun === 'both'
      ? `in-run ${Math.round(level * 100)}% intervals of both runs`
      : m.inRun === 'none'
        ? 'no in-run interval (older results)'
        : `in-run interval of ${m.inRun === 'head' ? 'this run' : 'the baseline'} (borrowed for the other)`;
  const tau =
    unit === 'pp'
      ? `${(m.betweenRunSd * 100).toFixed(2)} pp`
      : base > 0
        ? pct(m.betweenRunSd / base)
        : String(m.betweenRunSd);
  const source =
    m.source === 'history' ? `spread of ${m.history!.runs} base-branch runs` : 'default floor, no history';
  return `${inRun} + between-run noise ±${tau} (${source})`;
}

/**
 * The three-way verdict of one key metric row (see the module's model). Rows without both values
 * get no judgement.
 */
export function judgeMetric(
  d: MetricDelta,
  ctx: MetricContext,
  model: VerdictModel = DEFAULT_VERDICT_MODEL,
): MetricJudgement | undefined {
  if (d.base === undefined || d.head === undefined || d.id === 'submetric') return undefined;
  const id = d.id as MetricId;
  const { base, head } = d;
  const scale = d.unit === 'pp' ? 0.01 : 1;
  const tolerance = Math.max(d.tolerance.absolute * scale, (d.tolerance.relativePct / 100) * Math.abs(base));
  const levelOf = (r: RunResult) => uncertaintyOf(r)?.level ?? 0.95;
  let h = sidesOf(keyMetricEstimate(ctx.head, id, ctx.latencyKey), head, d.unit, levelOf(ctx.head));
  let b = sidesOf(keyMetricEstimate(ctx.base, id, ctx.latencyKey), base, d.unit, levelOf(ctx.base));
  const inRun = h && b ? 'both' : h ? 'head' : b ? 'base' : 'none';
  const borrow = (from: { down: number; up: number }, fromValue: number, toValue: number) =>
    d.unit === 'pp' || !(fromValue > 0)
      ? from
      : { down: (from.down * toValue) / fromValue, up: (from.up * toValue) / fromValue };
  if (!h && b) h = borrow(b, base, head);
  if (!b && h) b = borrow(h, head, base);
  const hs = h ?? { down: 0, up: 0 };
  const bs = b ?? { down: 0, up: 0 };
  // Between-run noise τ.
  const floor = model.betweenRunNoise[id];
  const defaultTau = Math.max(floor.relative * Math.abs(base), floor.absolute);
  const past = ctx.history.filter((x) => Number.isFinite(x.value));
  let tau = defaultTau;
  let history: NoiseModel['history'];
  if (past.length >= model.minHistory) {
    const m = median(past.map((x) => x.value));
    const sd = 1.4826 * median(past.map((x) => Math.abs(x.value - m)));
    const inRunVar =
      past.reduce((a, x) => {
        const s = sidesOf(x.estimate, x.value, d.unit, x.level ?? 0.95);
        return a + (s ? ((s.down + s.up) / 2) ** 2 : 0);
      }, 0) / past.length;
    tau = Math.max(Math.sqrt(Math.max(0, sd * sd - inRunVar)), defaultTau / 2);
    history = { runs: past.length, median: m, sd };
  }
  const delta = head - base;
  const tau2 = 2 * tau * tau;
  // sd of Δ toward lower values (head down, base up) and toward higher values.
  const sdDown = Math.sqrt(hs.down ** 2 + bs.up ** 2 + tau2);
  const sdUp = Math.sqrt(hs.up ** 2 + bs.down ** 2 + tau2);
  const zEq = normalQuantile(model.noRegressionConfidence);
  const zReg = normalQuantile(model.regressionConfidence);
  const interval: [number, number] = [delta - zEq * sdDown, delta + zEq * sdUp];
  // Work on the bad side: bad = the change that makes the metric worse, positive when worse.
  const lowerBetter = d.direction === 'lower';
  const bad = lowerBetter ? delta : -delta;
  const sdTowardGood = lowerBetter ? sdDown : sdUp;
  const sdTowardBad = lowerBetter ? sdUp : sdDown;
  const eps = 1e-12;
  let verdict: MetricVerdict;
  if (bad > tolerance + eps && bad - zReg * sdTowardGood > 0) verdict = 'regressed';
  else if (-bad > tolerance + eps && -bad - zReg * sdTowardBad > 0) verdict = 'improved';
  else if (bad + zEq * sdTowardBad <= tolerance + eps) verdict = 'no-regression';
  else verdict = 'inconclusive';
  const inRunSd = Math.sqrt((lowerBetter ? hs.up ** 2 + bs.down ** 2 : hs.down ** 2 + bs.up ** 2) || 0);
  const noise: Omit<NoiseModel, 'text'> = {
    source: history ? 'history' : 'default',
    betweenRunSd: tau,
    inRunSd,
    inRun,
    ...(history ? { history } : {}),
  };
  const level = Math.min(levelOf(ctx.head), levelOf(ctx.base));
  const out: MetricJudgement = {
    verdict,
    tolerance,
    interval,
    noise: { ...noise, text: noiseText(noise, d.unit, Math.abs(base), level) },
  };
  if (verdict === 'inconclusive') {
    const hint = settleHint(bad, tolerance, inRunSd, tau, zEq, zReg);
    out.settle = hint.text;
    out.settleFactor = hint.factor;
  }
  return out;
}

/**
 * What would settle an inconclusive metric: when the in-run part is what is too wide, the number
 * of requests (a longer run, or more runners) that would narrow it enough; when the between-run
 * noise alone is too wide for the tolerance, A/B rounds (interleaved runs cancel the machine's drift).
 */
export function settleHint(
  bad: number,
  tolerance: number,
  inRunSd: number,
  tau: number,
  zEq: number,
  zReg: number,
): { text: string; factor: number } {
  // Goal: either the bad-side bound within T (no regression) or, when bad > T, significance.
  const room = bad < tolerance ? (tolerance - bad) / zEq : bad / zReg;
  const left = room * room - 2 * tau * tau;
  if (left <= 0 || inRunSd === 0)
    return {
      text: 'A/B rounds (base and head interleaved on the same runners): the between-run noise alone is wider than the tolerance allows',
      factor: Number.POSITIVE_INFINITY,
    };
  const factor = Math.ceil(((inRunSd * inRunSd) / left) * 10) / 10;
  if (factor <= 1) return { text: 'a repeat of the run', factor: 1 };
  return {
    text: `about ${factor < 10 ? factor.toFixed(1) : Math.round(factor)}× the requests per side (a longer run or more runners), or A/B rounds`,
    factor,
  };
}

/** The change a judgement gives a row: `worse` only when regressed, `better` only when improved. */
function changeOf(verdict: MetricVerdict): MetricDelta['change'] {
  return verdict === 'regressed' ? 'worse' : verdict === 'improved' ? 'better' : 'unchanged';
}

/**
 * Judges every key metric of a comparison with the three-way rule ({@link judgeMetric}) and
 * recomputes the regressions from the new changes. Submetrics keep the fixed rule (they carry no
 * interval and are never gated). Pure; returns a new comparison.
 * @param history results of comparable base-branch runs (any order), for the between-run noise.
 */
export function applySignificance(
  comparison: Comparison,
  head: RunResult,
  base: RunResult,
  history: readonly RunResult[],
  model: VerdictModel = DEFAULT_VERDICT_MODEL,
): Comparison {
  const values = new Map(metricHistory(comparison, history).map((h) => [h.id, h.values]));
  const keyMetrics = comparison.keyMetrics.map((d): MetricDelta => {
    const id = d.id as MetricId;
    const past = (values.get(id) ?? []).flatMap((value, i) => {
      if (value === undefined) return [];
      const r = history[i]!;
      const estimate = keyMetricEstimate(r, id, comparison.latencyKey);
      const level = uncertaintyOf(r)?.level;
      return [{ value, ...(estimate ? { estimate } : {}), ...(level ? { level } : {}) }];
    });
    const judgement = judgeMetric(d, { head, base, latencyKey: comparison.latencyKey, history: past }, model);
    if (!judgement) return d;
    const baseEstimate = keyMetricEstimate(base, id, comparison.latencyKey);
    const headEstimate = keyMetricEstimate(head, id, comparison.latencyKey);
    return {
      ...d,
      judgement,
      change: changeOf(judgement.verdict),
      ...(baseEstimate ? { baseEstimate } : {}),
      ...(headEstimate ? { headEstimate } : {}),
    };
  });
  const regressions = [...keyMetrics, ...comparison.submetrics]
    .filter((d) => d.change === 'worse')
    .sort(worstFirst);
  return { ...comparison, keyMetrics, regressions, gatedRegressions: regressions.filter((d) => d.gated) };
}
