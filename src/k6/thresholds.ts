import { ConfigurationError } from '../errors.ts';
import type { MetricResult, MetricType, ThresholdRow } from '../result/schema.ts';

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
 * - a metric key is `name` or `name{tag:value,...}` (a submetric), its tags trimmed and unquoted
 *   (`metrics/metric.go` `AddSubmetric`);
 * - numbers are Go floats (`strconv.ParseFloat`): `NaN`, `Inf`, `0x1p3`, `1_000`; a bare `p` is p(0);
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

/**
 * Whether the underscores in a number are where Go allows them: only between digits, or between a
 * base prefix and a digit (Go `strconv.underscoreOK`).
 */
function underscoresOk(text: string): boolean {
  let body = text.replace(/^[+-]/, '');
  let saw = '^';
  let hex = false;
  if (/^0[xXoObB]/.test(body)) {
    hex = /^0[xX]/.test(body);
    body = body.slice(2);
    saw = '0';
  }
  for (const ch of body) {
    if (/[0-9]/.test(ch) || (hex && /[a-fA-F]/.test(ch))) saw = '0';
    else if (ch === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

const DECIMAL = /^[+-]?(?=[.\d_]*\d)[\d_]*\.?[\d_]*(?:[eE][+-]?[\d_]*\d[\d_]*)?$/;
const HEX =
  /^([+-]?)0[xX](?=[.\da-fA-F_]*[\da-fA-F])([\da-fA-F_]*)\.?([\da-fA-F_]*)[pP]([+-]?[\d_]*\d[\d_]*)$/;

/**
 * Parses a number as Go's `strconv.ParseFloat(s, 64)` does, which is what k6 uses for threshold
 * values and percentiles (`metrics/thresholds_parser.go`): decimal and hexadecimal floats (`0x1p3`,
 * the `p` exponent required), `_` between digits (`1_000`), `inf`/`infinity` with an optional sign
 * and `nan` (without one), in any case. A finite-looking number too large for a float64 is refused
 * (Go returns a range error).
 * @returns the number, or undefined when Go would refuse the text.
 */
export function parseGoFloat(text: string): number | undefined {
  if (/^[+-]?(?:inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (text.includes('_') && !underscoresOk(text)) return undefined;
  const clean = text.replaceAll('_', '');
  let value: number;
  const hex = HEX.exec(clean);
  if (hex) {
    const [, sign, whole, fraction, exponent] = hex as unknown as [string, string, string, string, string];
    const mantissa =
      Number.parseInt(whole || '0', 16) +
      [...fraction].reduce((acc, digit, i) => acc + Number.parseInt(digit, 16) / 16 ** (i + 1), 0);
    value = (sign === '-' ? -1 : 1) * mantissa * 2 ** Number(exponent);
  } else if (DECIMAL.test(clean)) {
    value = Number(clean);
  } else return undefined;
  return Number.isFinite(value) ? value : undefined;
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
  const value = parseGoFloat(right);
  if (value === undefined) {
    throw new ConfigurationError(`threshold "${source}"${where}: "${right}" is not a number`);
  }
  if ((AGGREGATIONS as readonly string[]).includes(method)) {
    return { source, aggregation: method as Aggregation, operator, value, valueKey: method };
  }
  if (method === 'p') {
    // k6 takes a bare `p` as a percentile without a value, i.e. p(0): the minimum.
    return { source, aggregation: 'p', percentile: 0, operator, value, valueKey: percentileKey(0) };
  }
  if (method.startsWith('p(') && method.endsWith(')')) {
    // Not trimmed inside the parentheses: Go's ParseFloat refuses `p( 95)` and so does k6.
    const percent = parseGoFloat(method.slice(2, -1));
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
 * Splits `name{tag:value,...}` as k6 reads a threshold's metric key: validated like
 * `metrics.ParseMetricName` (balanced braces at the end, every tag with a value), and the tags
 * read like `Metric.AddSubmetric`: the part inside the braces trimmed, empty parts skipped, each key
 * and value trimmed of spaces and then of quotes (`{ name : 'slow' }` is `name:slow`), a repeated
 * key's last value kept. The name is taken verbatim (k6 looks it up as written).
 * @throws ConfigurationError when braces are unbalanced or a tag has no value.
 */
export function parseMetricKey(key: string): MetricKey {
  const open = key.indexOf('{');
  const close = key.lastIndexOf('}');
  if (open === -1 && close === -1) return { name: key, tags: [] };
  if (open === -1 || close === -1 || close < open || close !== key.length - 1) {
    throw new ConfigurationError(`threshold metric "${key}" is malformed: expected name or name{tag:value}`);
  }
  const inner = key.slice(open + 1, close);
  for (const part of inner.split(',')) {
    const colon = part.indexOf(':');
    if (colon === -1 || part.slice(colon + 1) === '') {
      throw new ConfigurationError(
        `threshold metric "${key}": tag "${part}" has no value (expected tag:value)`,
      );
    }
  }
  const unquote = (text: string) => text.trim().replace(/^["']+|["']+$/g, '');
  const tags = new Map<string, string>();
  for (const part of inner.trim().split(',')) {
    if (part === '') continue;
    const colon = part.indexOf(':');
    tags.set(unquote(part.slice(0, colon)), unquote(part.slice(colon + 1)));
  }
  return { name: key.slice(0, open), tags: [...tags] };
}

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
