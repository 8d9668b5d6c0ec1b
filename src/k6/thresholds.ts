import { ConfigurationError } from '../errors.ts';
import type { MetricResult, MetricType, ThresholdRow } from '../result/result.ts';

/**
 * k6 threshold expressions, parsed and judged with k6's own rules, so that the script's thresholds
 * give on the aggregate the verdict k6 would give on one machine running the whole test.
 *
 * Rules implemented (k6 v2.2.0 `metrics/thresholds_parser.go`, `metrics/thresholds.go`,
 * `metrics/metric.go`; docs: https://grafana.com/docs/k6/latest/using-k6/thresholds/):
 * - an expression is `<aggregation> <operator> <number>`; operators are tried in the order
 *   `<=`, `<`, `>=`, `>`, `===`, `==`, `!=` and the first one found splits the expression;
 * - aggregations: `count`, `rate`, `value`, `avg`, `min`, `med`, `max`, `p(N)` with 0 <= N <= 100;
 * - counter supports count and rate; gauge value; rate rate; trend avg, min, max, med, p(N);
 * - a metric key is `name` or `name{tag:value,...}` (a submetric);
 * - at the end of a test an empty trend judges 0 for every aggregation, an empty counter count 0,
 *   and a rate with no samples passes its thresholds.
 */

/** Aggregation methods of a threshold expression. */
export type Aggregation = 'count' | 'rate' | 'value' | 'avg' | 'min' | 'med' | 'max' | 'p';

/** Comparison operators in k6's order of scanning. */
const OPERATORS = ['<=', '<', '>=', '>', '===', '==', '!='] as const;
export type Operator = (typeof OPERATORS)[number];

const AGGREGATIONS: readonly Aggregation[] = ['value', 'count', 'rate', 'avg', 'min', 'med', 'max'];

/** Aggregations each metric type supports (k6 `MetricType.supportedAggregationMethods`). */
export const SUPPORTED_AGGREGATIONS: Record<MetricType, readonly Aggregation[]> = {
  counter: ['count', 'rate'],
  gauge: ['value'],
  rate: ['rate'],
  trend: ['avg', 'min', 'max', 'med', 'p'],
};

/** One parsed expression such as `p(99.9)<1500`. */
export interface ThresholdExpression {
  /** The text as written in the script. */
  source: string;
  aggregation: Aggregation;
  /** For `p(N)`: N in percent (0..100). */
  percentile?: number;
  operator: Operator;
  /** Right-hand side, in the metric's unit (ms for time trends, fraction for rates). */
  value: number;
  /** The key of the aggregated value in a metric's `values`: `p(95)`, `avg`, `count`, … */
  valueKey: string;
}

/** One threshold of the script: an expression on a metric key, with its abort settings. */
export interface Threshold extends ThresholdExpression {
  /** The metric key as written, e.g. `http_req_duration{name:login}`. */
  metric: string;
  abortOnFail: boolean;
  /** `delayAbortEval` as written (a k6 duration string), if any. */
  delayAbortEval?: string;
}

/** A metric key split into its name and submetric tags. */
export interface MetricKey {
  name: string;
  /** Tag selectors in the order written, e.g. `[['scenario', 'api']]`. */
  tags: Array<[string, string]>;
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?inf(?:inity)?$/i;

function parseNumber(text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined;
  const lower = text.toLowerCase();
  if (lower.includes('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

/** Formats a percentile like Go's `%g` does for the values k6 users write (95 -> `95`, 99.9 -> `99.9`). */
export function percentileKey(percent: number): string {
  return `p(${Number(percent.toPrecision(15))})`;
}

/**
 * Parses one threshold expression with k6's rules.
 * @throws ConfigurationError naming the expression and what is wrong with it.
 */
export function parseThresholdExpression(source: string, metric = ''): ThresholdExpression {
  const where = metric ? ` on metric ${metric}` : '';
  let found: [string, Operator, string] | undefined;
  for (const op of OPERATORS) {
    const at = source.indexOf(op);
    if (at === -1) continue;
    const right = source.slice(at + op.length);
    if (right !== '') {
      found = [source.slice(0, at).trim(), op, right.trim()];
      break;
    }
  }
  if (!found) {
    throw new ConfigurationError(
      `threshold "${source}"${where} is malformed: expected <aggregation> <operator> <number>, e.g. "p(95)<500"`,
    );
  }
  const [method, operator, right] = found;
  const value = parseNumber(right);
  if (value === undefined) {
    throw new ConfigurationError(`threshold "${source}"${where}: "${right}" is not a number`);
  }
  if ((AGGREGATIONS as readonly string[]).includes(method)) {
    return { source, aggregation: method as Aggregation, operator, value, valueKey: method };
  }
  if (method.startsWith('p(') && method.endsWith(')')) {
    const percent = parseNumber(method.slice(2, -1).trim());
    if (percent === undefined || Number.isNaN(percent) || percent < 0 || percent > 100) {
      throw new ConfigurationError(
        `threshold "${source}"${where}: the percentile in ${method} must be a number from 0 to 100`,
      );
    }
    return {
      source,
      aggregation: 'p',
      percentile: percent,
      operator,
      value,
      valueKey: percentileKey(percent),
    };
  }
  throw new ConfigurationError(
    `threshold "${source}"${where}: unknown aggregation "${method}"; use count, rate, value, avg, min, med, max or p(N)`,
  );
}

/**
 * Splits `name{tag:value,...}` with k6's rules (`metrics.ParseMetricName`).
 * @throws ConfigurationError when braces are unbalanced or a tag has no value.
 */
export function parseMetricKey(key: string): MetricKey {
  const open = key.indexOf('{');
  const close = key.lastIndexOf('}');
  if (open === -1 && close === -1) return { name: key, tags: [] };
  if (open === -1 || close === -1 || close < open || close !== key.length - 1) {
    throw new ConfigurationError(`threshold metric "${key}" is malformed: expected name or name{tag:value}`);
  }
  const tags = key
    .slice(open + 1, close)
    .split(',')
    .map((part): [string, string] => {
      const colon = part.indexOf(':');
      const value = colon === -1 ? '' : part.slice(colon + 1);
      if (value === '') {
        throw new ConfigurationError(
          `threshold metric "${key}": tag "${part}" has no value (expected tag:value)`,
        );
      }
      return [part.slice(0, colon).trim(), value.trim()];
    });
  return { name: key.slice(0, open), tags };
}

/** One entry of `options.thresholds[metric]`: a string or `{threshold, abortOnFail, delayAbortEval}`. */
type ThresholdConfig = string | { threshold?: unknown; abortOnFail?: unknown; delayAbortEval?: unknown };

/**
 * Reads `options.thresholds` as `k6 inspect` prints it (`{metric: [expr | {threshold, abortOnFail,
 * delayAbortEval}]}`) and parses every expression.
 * @throws ConfigurationError for the first malformed metric key or expression.
 */
export function parseThresholds(thresholds: unknown): Threshold[] {
  if (thresholds === null || thresholds === undefined) return [];
  if (typeof thresholds !== 'object' || Array.isArray(thresholds)) {
    throw new ConfigurationError('options.thresholds must be an object of metric -> list of expressions');
  }
  const out: Threshold[] = [];
  for (const [metric, list] of Object.entries(thresholds as Record<string, unknown>)) {
    parseMetricKey(metric);
    if (!Array.isArray(list)) {
      throw new ConfigurationError(`options.thresholds["${metric}"] must be a list of expressions`);
    }
    for (const entry of list as ThresholdConfig[]) {
      const source = typeof entry === 'string' ? entry : entry?.threshold;
      if (typeof source !== 'string') {
        throw new ConfigurationError(
          `options.thresholds["${metric}"]: each entry must be a string or {threshold: "..."}`,
        );
      }
      const parsed = parseThresholdExpression(source, metric);
      const abortOnFail = typeof entry === 'object' && entry.abortOnFail === true;
      const delay =
        typeof entry === 'object' && typeof entry.delayAbortEval === 'string' ? entry.delayAbortEval : '';
      out.push({ ...parsed, metric, abortOnFail, ...(delay ? { delayAbortEval: delay } : {}) });
    }
  }
  return out;
}

/** Percentiles (in percent) that the thresholds ask of trends, so the aggregate computes them. */
export function thresholdPercentiles(thresholds: readonly Threshold[]): number[] {
  return [...new Set(thresholds.flatMap((t) => (t.percentile === undefined ? [] : [t.percentile])))];
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

function compare(lhs: number, op: Operator, rhs: number): boolean {
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
      return (v.count ?? 0) === 0 ? 0 : v[threshold.valueKey];
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
    const metric = metrics[t.metric];
    if (metric) checkAggregation(t, metric.type);
    const observed = observedValue(t, metric);
    if (observed === undefined && metric?.type === 'trend') {
      throw new Error(`internal: ${t.valueKey} was not aggregated for ${t.metric}`);
    }
    const ok = observed === undefined ? true : compare(observed, t.operator, t.value);
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
