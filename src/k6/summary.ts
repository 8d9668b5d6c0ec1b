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
  const known = fractions.get(key);
  if (known !== undefined || fractions.has(key)) return known;
  const m = /^p\((\d+(?:\.\d+)?)\)$/.exec(key);
  const fraction = m ? Number(m[1]) / 100 : undefined;
  if (fractions.size < 10_000) fractions.set(key, fraction);
  return fraction;
}

/** `(` in `p(…)`: keys that start `p(` are percentiles; the others are skipped without a lookup. */
const OPEN_PAREN = 40;
const P = 112;

/** Reused while reading one trend's percentiles. */
let scratchF = new Float64Array(256);
let scratchV = new Float64Array(256);
function growScratch(): void {
  const f = new Float64Array(scratchF.length * 2);
  const v = new Float64Array(scratchV.length * 2);
  f.set(scratchF);
  v.set(scratchV);
  scratchF = f;
  scratchV = v;
}

/**
 * Sorts the first `n` scratch points by fraction, in place. Insertion sort: the keys come in the
 * order of `--summary-trend-stats`, sorted but for a few threshold percentiles appended at the end.
 */
function sortScratch(n: number): void {
  for (let i = 1; i < n; i++) {
    const f = scratchF[i]!;
    const v = scratchV[i]!;
    let j = i - 1;
    while (j >= 0 && scratchF[j]! > f) {
      scratchF[j + 1] = scratchF[j]!;
      scratchV[j + 1] = scratchV[j]!;
      j--;
    }
    scratchF[j + 1] = f;
    scratchV[j + 1] = v;
  }
}

class PackedGrid implements QuantileGrid {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly packed: { fractions: Float64Array; values: Float64Array };
  #points: Array<[number, number]> | undefined;
  constructor(count: number, min: number, max: number, fractions: Float64Array, values: Float64Array) {
    this.count = count;
    this.min = min;
    this.max = max;
    this.packed = { fractions, values };
  }
  get points(): Array<[number, number]> {
    const { fractions, values } = this.packed;
    this.#points ??= Array.from(fractions, (f, i): [number, number] => [f, values[i]!]);
    return this.#points;
  }
}

/** A {@link QuantileGrid} held packed; `points` is built only when someone reads it. */
function packedGrid(
  count: number,
  min: number,
  max: number,
  fractions: Float64Array,
  values: Float64Array,
): QuantileGrid {
  return new PackedGrid(count, min, max, fractions, values);
}

function parseMetric(name: string, raw: Raw): RunnerMetric {
  if ('avg' in raw) {
    // Hot path: 1,000 runners × 20 trends × ~170 keys. Only `p(…)` keys are looked up, and the
    // points are packed into two typed arrays (pairs would be millions of small allocations).
    let n = 0;
    let sorted = true;
    let last = -1;
    for (const key in raw) {
      if (key.charCodeAt(0) !== P || key.charCodeAt(1) !== OPEN_PAREN) continue;
      const value = raw[key];
      const fraction = percentileFraction(key);
      if (fraction === undefined || typeof value !== 'number') continue;
      if (fraction < last) sorted = false;
      last = fraction;
      if (n === scratchF.length) growScratch();
      scratchF[n] = fraction;
      scratchV[n] = value;
      n++;
    }
    if (!('count' in raw))
      throw new Error(`summary of trend ${name} has no count; the runner did not get the trend stats`);
    if (!sorted) sortScratch(n);
    const grid = packedGrid(
      num(raw, 'count'),
      num(raw, 'min'),
      num(raw, 'max'),
      scratchF.slice(0, n),
      scratchV.slice(0, n),
    );
    return { type: 'trend', count: grid.count, min: grid.min, max: grid.max, avg: num(raw, 'avg'), grid };
  }
  if ('passes' in raw || 'fails' in raw)
    return { type: 'rate', passes: num(raw, 'passes'), fails: num(raw, 'fails') };
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
