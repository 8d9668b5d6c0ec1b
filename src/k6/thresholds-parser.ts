import { ConfigurationError } from '../errors.ts';
import { parseGoFloat } from './go-syntax.ts';

/**
 * k6 threshold expressions and metric keys, parsed with k6's own rules (k6 v2.2.0
 * `metrics/thresholds_parser.go`, `metrics/metric.go`; docs:
 * https://grafana.com/docs/k6/latest/using-k6/thresholds/). Judging them is src/k6/thresholds.ts.
 * - an expression is `<aggregation> <operator> <number>`; operators are tried in the order
 *   `<=`, `<`, `>=`, `>`, `===`, `==`, `!=` and the first one found splits the expression;
 * - aggregations: `count`, `rate`, `value`, `avg`, `min`, `med`, `max`, `p(N)` with 0 <= N <= 100;
 * - a metric key is `name` or `name{tag:value,...}` (a submetric), its tags trimmed and unquoted
 *   (`metrics/metric.go` `AddSubmetric`);
 * - numbers are Go floats (`strconv.ParseFloat`, src/k6/go-syntax.ts): `NaN`, `Inf`, `0x1p3`,
 *   `1_000`; a bare `p` is p(0).
 */

/** Aggregation methods of a threshold expression. */
export type Aggregation = 'count' | 'rate' | 'value' | 'avg' | 'min' | 'med' | 'max' | 'p';

/** Comparison operators in k6's order of scanning. */
const OPERATORS = ['<=', '<', '>=', '>', '===', '==', '!='] as const;
export type Operator = (typeof OPERATORS)[number];

/** The aggregations written as a bare word (`p(N)` and a bare `p` are read apart). */
const AGGREGATIONS: readonly Aggregation[] = ['value', 'count', 'rate', 'avg', 'min', 'med', 'max'];

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
 * Formats a percentile like Go's `%g` does for the values k6 users write (95 -> `95`, 99.9 -> `99.9`).
 * @param percent in percent (0..100), not a fraction.
 * @returns the key of that percentile in a trend's `values`, e.g. `p(99.9)`.
 */
export function percentileKey(percent: number): string {
  return `p(${Number(percent.toPrecision(15))})`;
}

/**
 * Parses one threshold expression with k6's rules.
 * @param source the expression as written, e.g. `p(95)<500`.
 * @param metric the metric key it is on, only for the error messages.
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
