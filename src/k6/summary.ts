import type { QuantileGrid } from '../result/quantiles.ts';
import type { CheckResult, GroupResult, MetricContains, MetricType } from '../result/result.ts';

/**
 * One runner's end-of-test summary, read from the JSON k6 writes with `--summary-export`
 * (the legacy machine-readable summary: `{metrics: {name: values}, root_group}`).
 *
 * That format has no metric types, so they are told by their keys: `passes`/`fails` is a rate,
 * `avg` a trend, `value` with `min`/`max` a gauge, `count` with `rate` a counter. A trend's
 * `count` and its `p(N)` grid are there because the runner ran with
 * `--summary-trend-stats count,min,max,avg,med,p(...)` (see plan.ts). k6 writes the thresholds of a
 * runner's slice there as `{expression: true-when-FAILED}`; they are ignored on purpose.
 */
export type RunnerMetric =
  | { type: 'counter'; count: number; rate: number }
  | { type: 'gauge'; value: number; min: number; max: number }
  | { type: 'rate'; passes: number; fails: number }
  | { type: 'trend'; count: number; min: number; max: number; avg: number; grid: QuantileGrid };

/** A runner's parsed summary. */
export interface RunnerSummary {
  metrics: Record<string, RunnerMetric>;
  rootGroup: GroupResult;
  /** The runner's own test run duration in s, from a counter's count/rate; undefined when no counter ticked. */
  durationS?: number;
}

type Raw = Record<string, unknown>;

function num(raw: Raw, key: string): number {
  const v = raw[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** `p(99.9)` → 0.999, other keys → undefined; memoised, every runner's summary has the same keys. */
const fractions = new Map<string, number | undefined>();
function percentileFraction(key: string): number | undefined {
  if (fractions.has(key)) return fractions.get(key);
  const m = /^p\((\d+(?:\.\d+)?)\)$/.exec(key);
  const fraction = m ? Number(m[1]) / 100 : undefined;
  if (fractions.size < 10_000) fractions.set(key, fraction);
  return fraction;
}

function parseMetric(name: string, raw: Raw): RunnerMetric {
  if ('passes' in raw || 'fails' in raw)
    return { type: 'rate', passes: num(raw, 'passes'), fails: num(raw, 'fails') };
  if ('avg' in raw) {
    const points: Array<[number, number]> = [];
    let sorted = true;
    for (const key in raw) {
      const fraction = percentileFraction(key);
      const value = raw[key];
      if (fraction === undefined || typeof value !== 'number') continue;
      if (points.length > 0 && points[points.length - 1]![0] > fraction) sorted = false;
      points.push([fraction, value]);
    }
    if (!sorted) points.sort((a, b) => a[0] - b[0]);
    if (!('count' in raw))
      throw new Error(`summary of trend ${name} has no count; the runner did not get the trend stats`);
    const grid = { count: num(raw, 'count'), min: num(raw, 'min'), max: num(raw, 'max'), points };
    return { type: 'trend', count: grid.count, min: grid.min, max: grid.max, avg: num(raw, 'avg'), grid };
  }
  if ('value' in raw)
    return { type: 'gauge', value: num(raw, 'value'), min: num(raw, 'min'), max: num(raw, 'max') };
  if ('count' in raw) return { type: 'counter', count: num(raw, 'count'), rate: num(raw, 'rate') };
  throw new Error(`summary metric ${name} has an unknown shape: ${Object.keys(raw).join(', ')}`);
}

function parseGroup(raw: Raw): GroupResult {
  const groups = Object.values((raw.groups ?? {}) as Record<string, Raw>).map(parseGroup);
  const checks = Object.values((raw.checks ?? {}) as Record<string, Raw>).map(
    (c): CheckResult => ({
      name: String(c.name ?? ''),
      path: String(c.path ?? ''),
      passes: num(c, 'passes'),
      fails: num(c, 'fails'),
    }),
  );
  return { name: String(raw.name ?? ''), path: String(raw.path ?? ''), groups, checks };
}

/**
 * Parses the content of a runner's `--summary-export` file.
 * @throws Error when the JSON is not a k6 summary export.
 */
export function parseRunnerSummary(json: string): RunnerSummary {
  const doc = JSON.parse(json) as Raw;
  if (!doc || typeof doc.metrics !== 'object' || doc.metrics === null) {
    throw new Error('not a k6 summary export: no "metrics" object');
  }
  const metrics: Record<string, RunnerMetric> = {};
  for (const [name, raw] of Object.entries(doc.metrics as Record<string, Raw>)) {
    metrics[name] = parseMetric(name, raw);
  }
  let durationS: number | undefined;
  for (const m of Object.values(metrics)) {
    if (m.type === 'counter' && m.count > 0 && m.rate > 0) {
      durationS = m.count / m.rate;
      break;
    }
  }
  const rootGroup = parseGroup((doc.root_group ?? {}) as Raw);
  return durationS === undefined ? { metrics, rootGroup } : { metrics, rootGroup, durationS };
}

/** k6's built-in metrics and what they contain (https://grafana.com/docs/k6/latest/using-k6/metrics/reference/). */
const BUILTIN_CONTAINS: Record<string, MetricContains> = {
  data_received: 'data',
  data_sent: 'data',
  ws_msgs_received: 'default',
};

/**
 * What a metric's values measure. Prefers what the runners' REST API said (`/v1/metrics` has
 * `contains` for every metric, custom ones too); otherwise k6's built-in names: `data_*` are bytes,
 * and every built-in trend (`http_req_*`, `iteration_duration`, `group_duration`, `ws_*`,
 * `grpc_req_duration`, `browser_*`) is time.
 */
export function metricContains(
  name: string,
  type: MetricType,
  known?: Record<string, MetricContains>,
): MetricContains {
  const base = name.split('{')[0]!;
  const fromApi = known?.[base];
  if (fromApi) return fromApi;
  if (BUILTIN_CONTAINS[base]) return BUILTIN_CONTAINS[base]!;
  if (
    type === 'trend' &&
    /^(http_req_|iteration_duration|group_duration|ws_|grpc_req_duration|browser_)/.test(base)
  ) {
    return 'time';
  }
  return 'default';
}

/**
 * Sets `contains: "time"` on the metrics (and their submetrics) the script declares as time
 * (`new Trend('name', true)`, see `declaredContains` in preflight.ts) where the aggregation could
 * only say `default`: the runners' REST API, which knows, is polled only every progress interval,
 * so a run shorter than that never told. Changes `metrics` in place.
 */
export function applyDeclaredContains(
  metrics: Record<string, { contains: MetricContains }>,
  declared: Record<string, MetricContains>,
): void {
  for (const [key, metric] of Object.entries(metrics)) {
    const base = key.split('{')[0]!;
    if (metric.contains === 'default' && declared[base]) metric.contains = declared[base]!;
  }
}
