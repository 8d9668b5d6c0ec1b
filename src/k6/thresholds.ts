import { ConfigurationError } from '../errors.ts';
import { MERGE_RESOLUTION } from '../result/quantiles.ts';
import type { MetricResult, MetricType, ThresholdRow } from '../result/schema.ts';
import { K6_METRIC } from './metrics.ts';
import {
  type Aggregation,
  type Operator,
  parseMetricKey,
  type Threshold,
  type ThresholdExpression,
} from './thresholds-parser.ts';

/**
 * k6 thresholds judged with k6's own rules, so that the script's thresholds give on the aggregate
 * the verdict k6 would give on one machine running the whole test. Parsing them is
 * src/k6/thresholds-parser.ts.
 *
 * Rules implemented (k6 v2.2.0 `metrics/thresholds.go`, `metrics/metric.go`; docs:
 * https://grafana.com/docs/k6/latest/using-k6/thresholds/):
 * - counter supports count and rate; gauge value; rate rate; trend avg, min, max, med, p(N);
 * - at the end of a test an empty trend judges 0 for every aggregation, an empty counter count 0,
 *   and a rate with no samples passes its thresholds.
 */

/** Aggregations each metric type supports (k6 `MetricType.supportedAggregationMethods`). */
export const SUPPORTED_AGGREGATIONS: Record<MetricType, readonly Aggregation[]> = {
  counter: ['count', 'rate'],
  gauge: ['value'],
  rate: ['rate'],
  trend: ['avg', 'min', 'max', 'med', 'p'],
};

/** A key that is the same for every spelling of one submetric (`name{a:1,b:2}`, tags sorted). */
function submetricIdentity(key: string): string {
  try {
    const { name, tags } = parseMetricKey(key);
    if (tags.length === 0 && !key.includes('{')) return name;
    return `${name}{${tags
      .map(([k, v]) => JSON.stringify([k, v]))
      .sort()
      .join(',')}}`;
  } catch {
    return key;
  }
}

/**
 * Finds the metric a threshold's key names, as k6 would: the key as written, else the submetric
 * with the same name and tags however spelt (k6 names a submetric after the trimmed text between
 * its braces, and two spellings of the same tags share one submetric).
 */
export function findMetric<T>(metrics: Record<string, T>, key: string): T | undefined {
  if (Object.hasOwn(metrics, key)) return metrics[key];
  if (!key.includes('{')) return undefined;
  const identity = submetricIdentity(key);
  const found = Object.keys(metrics).find((k) => k.includes('{') && submetricIdentity(k) === identity);
  return found === undefined ? undefined : metrics[found];
}

/**
 * Which trends the aggregate gives `percentileBands`: those a threshold judges by a percentile
 * (however the submetric's tags are spelt, as {@link findMetric} matches them) and the latency
 * trends every report reads (`http_req_duration`, `http_req_duration{expected_response:true}`).
 */
export function bandedTrends(thresholds: readonly Threshold[]): (name: string) => boolean {
  const keys = thresholds.filter((t) => t.percentile !== undefined).map((t) => t.metric);
  const latency = new Set<string>([K6_METRIC.httpReqDuration, K6_METRIC.httpReqDurationExpected]);
  return (name) => latency.has(name) || keys.some((k) => findMetric({ [name]: true }, k) !== undefined);
}

/** Percentiles (in percent) that the thresholds ask of trends, so the aggregate computes them. */
export function thresholdPercentiles(thresholds: readonly Threshold[]): number[] {
  return [
    ...new Set(
      thresholds.flatMap((t) => (t.percentile === undefined || t.percentile === 0 ? [] : [t.percentile])),
    ),
  ];
}

/**
 * Checks that an expression's aggregation is one the metric's type supports.
 * @throws ConfigurationError with the supported list, worded like k6's own message.
 */
export function checkAggregation(threshold: Threshold, type: MetricType): void {
  const supported = SUPPORTED_AGGREGATIONS[type];
  if (!supported.includes(threshold.aggregation)) {
    throw new ConfigurationError(
      `threshold "${threshold.source}" on ${threshold.metric}: ${threshold.aggregation === 'p' ? 'p(N)' : threshold.aggregation} is not supported on a ${type} metric; use ${supported.map((a) => (a === 'p' ? 'p(N)' : a)).join(', ')}`,
    );
  }
}

/** `lhs <op> rhs` as k6 judges a threshold (`metrics/thresholds.go`). */
export function compare(lhs: number, op: Operator, rhs: number): boolean {
  switch (op) {
    case '<':
      return lhs < rhs;
    case '<=':
      return lhs <= rhs;
    case '>':
      return lhs > rhs;
    case '>=':
      return lhs >= rhs;
    case '==':
    case '===':
      return lhs === rhs;
    case '!=':
      return lhs !== rhs;
  }
}

/**
 * `observed <op> limit` for a value the merge computed (a trend's `avg`, `med` or `p(N)` over
 * several runners): a value within the merge's resolution ({@link MERGE_RESOLUTION}, relative) of
 * the limit is the limit, so a threshold at k6's exact percentile gets k6's verdict for every
 * operator (`p(99)<=395.01` passes, `p(99)<395.01` fails, on a merged 395.01000000000005). A limit
 * farther inside the merge's band is judged on the merged value and reported `uncertain`
 * ({@link evaluateThresholds}).
 */
export function compareMerged(observed: number, op: Operator, limit: number): boolean {
  const close =
    Math.abs(observed - limit) <= MERGE_RESOLUTION * Math.max(Math.abs(observed), Math.abs(limit));
  return compare(close ? limit : observed, op, limit);
}

/** Trend aggregations the merge computes (count, min and max are exact sums and extremes). */
const MERGED_AGGREGATIONS = new Set<Aggregation>(['avg', 'med', 'p']);

/**
 * The value k6 would judge for `threshold` on `metric` at the end of a test, or `undefined` where k6
 * has none (a rate with no samples, a counter rate over a zero duration): such a threshold passes.
 * An absent metric is judged as an empty one: 0 for trend aggregations, counts and values.
 */
export function observedValue(
  threshold: ThresholdExpression,
  metric: MetricResult | undefined,
): number | undefined {
  if (!metric) return threshold.aggregation === 'rate' ? undefined : 0;
  const v = metric.values;
  switch (metric.type) {
    case 'rate':
      return (v.passes ?? 0) + (v.fails ?? 0) > 0 ? v.rate : undefined;
    case 'counter':
      return threshold.aggregation === 'count' ? (v.count ?? 0) : v.rate;
    case 'gauge':
      return v.value ?? 0;
    case 'trend':
      if ((v.count ?? 0) === 0) return 0;
      // p(0) is the smallest sample (k6's TrendSink.P(0)): exact as min.
      return threshold.percentile === 0 ? v.min : v[threshold.valueKey];
  }
}

/**
 * Judges every threshold on the aggregated metrics, with k6's end-of-test semantics.
 * Writes each outcome into `metrics[metric].thresholds` too (handleSummary shape).
 * @param metrics the global metrics, trends carrying every `p(N)` of {@link thresholdPercentiles}.
 * @throws ConfigurationError when an expression uses an aggregation its metric's type lacks.
 * @returns one row per expression, in the order given (`k6 inspect` sorts metrics by name).
 */
export function evaluateThresholds(
  thresholds: readonly Threshold[],
  metrics: Record<string, MetricResult>,
): ThresholdRow[] {
  return thresholds.map((t) => {
    const metric = findMetric(metrics, t.metric);
    if (metric) checkAggregation(t, metric.type);
    const observed = observedValue(t, metric);
    if (observed === undefined && metric?.type === 'trend') {
      throw new Error(`internal: ${t.valueKey} was not aggregated for ${t.metric}`);
    }
    const merged = metric?.type === 'trend' && MERGED_AGGREGATIONS.has(t.aggregation) && t.percentile !== 0;
    const ok =
      observed === undefined ? true : (merged ? compareMerged : compare)(observed, t.operator, t.value);
    if (metric) {
      metric.thresholds ??= {};
      metric.thresholds[t.source] = observed === undefined ? { ok } : { ok, observed };
    }
    const band = metric?.percentileBands?.[t.valueKey];
    const uncertain =
      observed !== undefined && band !== undefined && band[0] <= t.value && t.value <= band[1];
    return {
      metric: t.metric,
      expression: t.source,
      ok,
      ...(observed === undefined ? {} : { observed }),
      abortOnFail: t.abortOnFail,
      ...(uncertain ? { uncertain: true as const, band } : {}),
    };
  });
}
