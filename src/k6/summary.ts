import type { QuantileGrid } from '../result/quantiles.ts';
import type { CheckResult, GroupResult } from '../result/schema.ts';

/**
 * One runner's end-of-test summary, read from the compact summary its entry module writes
 * (`compactSummary` in src/k6/compact-summary.ts: metric types given) or from the JSON k6 writes with `--summary-export`
 * (the legacy machine-readable summary: `{metrics: {name: values}, root_group}`).
 *
 * The export has no metric types, so they are told by their keys: `passes`/`fails` is a rate,
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
  /** Set when this was read from k6's `--summary-export`, not from the compact summary. */
  fromExport?: true;
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

/** A {@link QuantileGrid} held packed; `points` is built only when someone reads it. */
class PackedGrid implements QuantileGrid {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly packed: { fractions: Float64Array; values: Float64Array; knots?: Float64Array };
  #points: Array<[number, number]> | undefined;
  constructor(
    count: number,
    min: number,
    max: number,
    fractions: Float64Array,
    values: Float64Array,
    knots?: Float64Array,
  ) {
    this.count = count;
    this.min = min;
    this.max = max;
    this.packed = knots ? { fractions, values, knots } : { fractions, values };
  }
  get points(): Array<[number, number]> {
    const { fractions, values } = this.packed;
    this.#points ??= Array.from(fractions, (f, i): [number, number] => [f, values[i]!]);
    return this.#points;
  }
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
    return trendMetric(
      [num(raw, 'count'), num(raw, 'min'), num(raw, 'max'), num(raw, 'avg')],
      scratchF.slice(0, n),
      scratchV.slice(0, n),
    );
  }
  // The export has no types: a rate has passes/fails, a gauge value, a counter count.
  const type =
    'passes' in raw || 'fails' in raw ? 'rate' : 'value' in raw ? 'gauge' : 'count' in raw ? 'counter' : '';
  if (!type) throw new Error(`summary metric ${name} has an unknown shape: ${Object.keys(raw).join(', ')}`);
  return valueMetric(name, type, raw);
}

/**
 * A trend from its `[count, min, max, avg]` and its percentile grid (fractions ascending, values);
 * `knots`, when given, is `[min, …values, max]` in one array (the values are a view into it).
 */
function trendMetric(
  [count, min, max, avg]: [number, number, number, number],
  fractions: Float64Array,
  values: Float64Array,
  knots?: Float64Array,
): RunnerMetric {
  return {
    type: 'trend',
    count,
    min,
    max,
    avg,
    grid: new PackedGrid(count, min, max, fractions, values, knots),
  };
}

/**
 * A counter, gauge or rate from k6's values object of that metric (the same in the export and in
 * handleSummary's data): `{count, rate}`, `{value, min, max}`, `{passes, fails}`.
 * @throws Error naming the metric when the type is none of those.
 */
function valueMetric(name: string, type: unknown, v: Raw): RunnerMetric {
  switch (type) {
    case 'counter':
      return { type: 'counter', count: num(v, 'count'), rate: num(v, 'rate') };
    case 'gauge':
      return { type: 'gauge', value: num(v, 'value'), min: num(v, 'min'), max: num(v, 'max') };
    case 'rate':
      return { type: 'rate', passes: num(v, 'passes'), fails: num(v, 'fails') };
    default:
      throw new Error(`summary metric ${name} has an unknown type: ${String(type)}`);
  }
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
 * The `format` of the compact runner summary (`compactSummary` in src/k6/compact-summary.ts, which
 * writes the string itself: it runs inside k6, where it cannot import this).
 */
export const COMPACT_SUMMARY_FORMAT = 'k6d-summary/2';

/** Where a compact trend's stats are in its values array, for one `stats` list. */
interface CompactLayout {
  /** Index of each percentile, ascending by fraction. */
  index: Int32Array;
  /** The percentiles' fractions (shared, read-only, by every grid of this layout). */
  fractions: Float64Array;
  count: number;
  min: number;
  max: number;
  avg: number;
  /**
   * The stats hold `min, p(…) ascending, max` in a row (summaryTrendStats in plan.ts orders them
   * so): a trend's knots are then a view of its packed values, nothing is copied.
   */
  contiguous: boolean;
}

/** Layouts by `stats` list: every runner of a run has the same one. */
const compactLayouts = new Map<string, CompactLayout>();

function compactLayout(stats: string[]): CompactLayout {
  const key = stats.join(',');
  const known = compactLayouts.get(key);
  if (known) return known;
  const found: Array<[number, number]> = [];
  stats.forEach((stat, i) => {
    const fraction = percentileFraction(stat);
    if (fraction !== undefined) found.push([fraction, i]);
  });
  found.sort((a, b) => a[0] - b[0]);
  const min = stats.indexOf('min');
  const max = stats.indexOf('max');
  const layout = {
    index: Int32Array.from(found, ([, i]) => i),
    fractions: Float64Array.from(found, ([f]) => f),
    count: stats.indexOf('count'),
    min,
    max,
    avg: stats.indexOf('avg'),
    contiguous: min >= 0 && max === min + found.length + 1 && found.every(([, i], k) => i === min + 1 + k),
  };
  if (compactLayouts.size > 16) compactLayouts.clear();
  compactLayouts.set(key, layout);
  return layout;
}

function parseCompactMetric(name: string, raw: Raw, layout: CompactLayout, statCount: number): RunnerMetric {
  const values = raw.values;
  if (raw.type === 'trend') {
    if (typeof values !== 'string') throw new Error(`compact summary of trend ${name} has no packed values`);
    if (layout.count < 0)
      throw new Error(`summary of trend ${name} has no count; the runner did not get the trend stats`);
    const packed = unpackFloat64(values);
    if (packed.length !== statCount)
      throw new Error(`compact summary of trend ${name} has ${packed.length} values for ${statCount} stats`);
    const at = (i: number): number => {
      const v = packed[i]!;
      return Number.isFinite(v) ? v : 0;
    };
    const { index, fractions } = layout;
    const head = [at(layout.count), at(layout.min), at(layout.max), at(layout.avg)] as [
      number,
      number,
      number,
      number,
    ];
    if (layout.contiguous) {
      return trendMetric(
        head,
        fractions,
        packed.subarray(layout.min + 1, layout.max),
        packed.subarray(layout.min, layout.max + 1),
      );
    }
    const points = new Float64Array(index.length);
    // A stat k6 did not give is NaN, skipped by the merge.
    for (let i = 0; i < index.length; i++) points[i] = packed[index[i]!]!;
    return trendMetric(head, fractions, points);
  }
  return valueMetric(name, raw.type, (values ?? {}) as Raw);
}

/** The float64s (little-endian) of a base64 string, decoded straight into an aligned buffer. */
function unpackFloat64(base64: string): Float64Array {
  // 3 bytes per 4 characters, less the padding.
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  const bytes = (base64.length / 4) * 3 - padding;
  const out = new Float64Array(Math.floor(bytes / 8));
  const written = Buffer.from(out.buffer).write(base64, 'base64');
  return written === out.length * 8 ? out : out.subarray(0, Math.floor(written / 8));
}

/**
 * Parses a runner's summary: the compact one its entry module's handleSummary writes
 * (`compactSummary` in src/k6/compact-summary.ts), or k6's own `--summary-export` (the fallback when handleSummary did not
 * write, e.g. a script whose `handleSummaryTimeout` was too short).
 * @throws Error when the JSON is neither.
 */
export function parseRunnerSummary(json: string): RunnerSummary {
  const doc = JSON.parse(json) as Raw;
  if (!doc || typeof doc.metrics !== 'object' || doc.metrics === null) {
    throw new Error('not a k6 summary export: no "metrics" object');
  }
  const metrics: Record<string, RunnerMetric> = {};
  if (doc.format === COMPACT_SUMMARY_FORMAT) {
    const stats = Array.isArray(doc.stats) ? doc.stats.map(String) : [];
    const layout = compactLayout(stats);
    for (const [name, raw] of Object.entries(doc.metrics as Record<string, Raw>)) {
      metrics[name] = parseCompactMetric(name, raw, layout, stats.length);
    }
  } else {
    for (const [name, raw] of Object.entries(doc.metrics as Record<string, Raw>)) {
      metrics[name] = parseMetric(name, raw);
    }
  }
  let durationS: number | undefined;
  for (const m of Object.values(metrics)) {
    if (m.type === 'counter' && m.count > 0 && m.rate > 0) {
      durationS = m.count / m.rate;
      break;
    }
  }
  const rootGroup = parseGroup((doc.root_group ?? {}) as Raw);
  return {
    metrics,
    rootGroup,
    ...(durationS === undefined ? {} : { durationS }),
    ...(doc.format === COMPACT_SUMMARY_FORMAT ? {} : { fromExport: true as const }),
  };
}
