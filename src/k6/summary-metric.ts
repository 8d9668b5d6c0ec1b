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

/** A parsed JSON object. */
export type Raw = Record<string, unknown>;

/** `raw[key]` when it is a finite number, else 0. */
export function num(raw: Raw, key: string): number {
  const v = raw[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** `p(99.9)` → 0.999, other keys → undefined; memoised, every runner's summary has the same keys. */
const fractions = new Map<string, number | undefined>();
export function percentileFraction(key: string): number | undefined {
  const known = fractions.get(key);
  if (known !== undefined || fractions.has(key)) return known;
  const m = /^p\((\d+(?:\.\d+)?)\)$/.exec(key);
  const fraction = m ? Number(m[1]) / 100 : undefined;
  if (fractions.size < 10_000) fractions.set(key, fraction);
  return fraction;
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

/**
 * A trend from its `[count, min, max, avg]` and its percentile grid (fractions ascending, values);
 * `knots`, when given, is `[min, …values, max]` in one array (the values are a view into it).
 */
export function trendMetric(
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
export function valueMetric(name: string, type: unknown, v: Raw): RunnerMetric {
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

/** A group of k6's summary (`root_group`: groups and checks as objects by name, or arrays). */
export function parseGroup(raw: Raw): GroupResult {
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
 * A summary from its metrics and root group: the runner's duration in s is the first counter's
 * count / rate (undefined when no counter ticked).
 */
export function runnerSummary(
  metrics: Record<string, RunnerMetric>,
  rootGroup: Raw,
  fromExport: boolean,
): RunnerSummary {
  let durationS: number | undefined;
  for (const m of Object.values(metrics)) {
    if (m.type === 'counter' && m.count > 0 && m.rate > 0) {
      durationS = m.count / m.rate;
      break;
    }
  }
  return {
    metrics,
    rootGroup: parseGroup(rootGroup),
    ...(durationS === undefined ? {} : { durationS }),
    ...(fromExport ? { fromExport: true as const } : {}),
  };
}
