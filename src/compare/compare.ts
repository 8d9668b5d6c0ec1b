import { ConfigurationError } from '../errors.ts';
import { K6_METRIC } from '../k6/metrics.ts';
import { percentileKey } from '../k6/thresholds-parser.ts';
import type { MetricResult, RunResult } from '../result/schema.ts';
import type { Estimate } from '../result/uncertainty-schema.ts';
import {
  type Change,
  DEFAULT_GATE,
  DEFAULT_TOLERANCES,
  type Direction,
  judgeChange,
  METRIC_IDS,
  type MetricId,
  type MetricJudgement,
  type NoiseVerdict,
  type Tolerance,
  type Tolerances,
  type ToleranceUnit,
} from './judgement.ts';

/**
 * Comparison of a run (head) with its baseline (base): per-metric deltas, the direction-aware
 * regression rules with their tolerances, and the environment check that decides whether the
 * two runs can be compared at all. Pure functions: no GitHub, no I/O.
 *
 * The rule (one for every metric): a change counts only when it exceeds BOTH tolerances of the
 * metric, the relative one (% of the base value) and the absolute one (the noise floor, in the
 * metric's unit: ms, percentage points or requests per second). A counted change is `worse` or
 * `better` by the metric's direction; anything else is `unchanged` (within tolerance).
 * Example: p95 2.0 ms -> 2.3 ms is +15% but only +0.3 ms, under the 1 ms floor: unchanged.
 */

/** How a key metric is read from a result. */
interface KeyMetricDef {
  id: MetricId;
  label: string;
  direction: Direction;
  unit: ToleranceUnit;
  /** The value in the result's own unit (ms, per second, fraction), or undefined when absent. */
  read: (result: RunResult, latencyKey: string) => number | undefined;
}

const latency =
  (percent: number) =>
  (result: RunResult, key: string): number | undefined => {
    const values = result.metrics[key]?.values;
    if (!values) return undefined;
    return values[percentileKey(percent)] ?? (percent === 50 ? values.med : undefined);
  };

const KEY_METRICS: KeyMetricDef[] = [
  {
    id: 'rps',
    label: 'Requests per second',
    direction: 'higher',
    unit: '/s',
    read: (r) => r.metrics[K6_METRIC.httpReqs]?.values.rate,
  },
  { id: 'p50', label: 'Latency p50', direction: 'lower', unit: 'ms', read: latency(50) },
  { id: 'p90', label: 'Latency p90', direction: 'lower', unit: 'ms', read: latency(90) },
  { id: 'p95', label: 'Latency p95', direction: 'lower', unit: 'ms', read: latency(95) },
  { id: 'p99', label: 'Latency p99', direction: 'lower', unit: 'ms', read: latency(99) },
  {
    id: 'error-rate',
    label: 'Error rate',
    direction: 'lower',
    unit: 'pp',
    read: (r) => r.metrics[K6_METRIC.httpReqFailed]?.values.rate,
  },
  {
    id: 'checks',
    label: 'Checks passed',
    direction: 'higher',
    unit: 'pp',
    read: (r) => r.metrics.checks?.values.rate,
  },
];

/** One compared value. Values are in the result's units: ms, requests per second, or a fraction (rates). */
export interface MetricDelta {
  /** Key metric id, or `submetric` for a tagged submetric row. */
  id: MetricId | 'submetric';
  /** Human label (`Latency p95`) or, for submetrics, the k6 metric key (`http_req_duration{scenario:api}`). */
  label: string;
  /** What was read: k6 metric key and value key, e.g. `http_req_duration{expected_response:true} p(95)`. */
  source: string;
  unit: ToleranceUnit;
  direction: Direction;
  base?: number;
  head?: number;
  /** head - base, in the value's unit (a fraction for rates). */
  delta?: number;
  /** delta relative to base in percent; undefined when base is 0 or missing. */
  deltaPct?: number;
  change: Change;
  /** `true` when this metric gates the check (key metrics named in the `gate` input). */
  gated: boolean;
  tolerance: Tolerance;
  /**
   * Key metrics judged by the older noise gate (`applyHistory` in src/compare/history.ts, not the
   * report's default): the verdict against the base
   * branch's history. When set, `change` is that verdict's (`worse` only when head is outside the
   * history's normal range and beyond the tolerances), while base, head and delta stay the
   * baseline run's.
   */
  noise?: NoiseVerdict;
  /** With `noise`: the fixed rule's verdict against the baseline run, which the history overruled. */
  baselineChange?: Change;
  /**
   * Key metrics with both values: the three-way statistical verdict on this row's delta (against
   * the baseline run), with its interval and noise model (src/compare/significance.ts). When set,
   * `change` follows it: `worse` only when `regressed`, `better` only when `improved`.
   */
  judgement?: MetricJudgement;
  /** With `judgement`: each side's in-run interval, when its result has one (src/result/uncertainty-schema.ts). */
  baseEstimate?: Estimate;
  headEstimate?: Estimate;
}

/** The whole comparison of head with base. */
export interface Comparison {
  /** The key metrics, in {@link METRIC_IDS} order. */
  keyMetrics: MetricDelta[];
  /** Tagged submetrics present in head (per scenario, per tag), compared where base has them too. */
  submetrics: MetricDelta[];
  /** Every row that is worse beyond tolerance, worst first: gated before not gated, then by relative change. */
  regressions: MetricDelta[];
  /** The gated regressions (the ones that fail the check). */
  gatedRegressions: MetricDelta[];
  /** The metric key the latency rows were read from. */
  latencyKey: string;
}

/** Options of {@link compareResults}. */
export interface CompareOptions {
  tolerances: Tolerances;
  gate: MetricId[];
}

function delta(fields: Omit<MetricDelta, 'delta' | 'deltaPct' | 'change'>): MetricDelta {
  const { base, head } = fields;
  const hasBoth = base !== undefined && head !== undefined;
  const d = hasBoth ? head - base : undefined;
  return {
    ...fields,
    delta: d,
    deltaPct: hasBoth && base !== 0 ? ((head - base) / Math.abs(base)) * 100 : undefined,
    change: judgeChange(base, head, fields.direction, fields.tolerance, fields.unit),
  };
}

/** The latency metric both results can be read from: expected responses when both have it. */
export function latencyMetricKey(base: RunResult | undefined, head: RunResult): string {
  const expected = K6_METRIC.httpReqDurationExpected;
  return head.metrics[expected] && (!base || base.metrics[expected]) ? expected : K6_METRIC.httpReqDuration;
}

/**
 * The key metric rows of head against base (base may be absent: every row is then `missing`).
 */
export function compareKeyMetrics(
  base: RunResult | undefined,
  head: RunResult,
  options: CompareOptions,
): { rows: MetricDelta[]; latencyKey: string } {
  const latencyKey = latencyMetricKey(base, head);
  const rows = KEY_METRICS.map((def) =>
    delta({
      id: def.id,
      label: def.label,
      source: sourceOf(def, latencyKey),
      unit: def.unit,
      direction: def.direction,
      base: base ? def.read(base, latencyKey) : undefined,
      head: def.read(head, latencyKey),
      gated: options.gate.includes(def.id),
      tolerance: options.tolerances[def.id],
    }),
  );
  return { rows, latencyKey };
}

/**
 * A key metric's value in a result, in the result's unit (ms, /s, or a fraction for rates);
 * undefined when the result has no such value.
 * @param latencyKey the latency trend to read percentiles from (see {@link latencyMetricKey}).
 */
export function keyMetricValue(id: MetricId, result: RunResult, latencyKey: string): number | undefined {
  return KEY_METRICS.find((d) => d.id === id)!.read(result, latencyKey);
}

function sourceOf(def: KeyMetricDef, latencyKey: string): string {
  switch (def.id) {
    case 'rps':
      return `${K6_METRIC.httpReqs} rate`;
    case 'error-rate':
      return `${K6_METRIC.httpReqFailed} rate`;
    case 'checks':
      return `${K6_METRIC.checks} rate`;
    default:
      return `${latencyKey} ${percentileKey(Number(def.id.slice(1)))}`;
  }
}

/**
 * Rows for tagged submetrics (`http_req_duration{scenario:api}` p95, `http_reqs{…}` rate,
 * `http_req_failed{…}` rate, `checks{…}` rate) present in head; the `expected_response:true`
 * latency submetric is left out (it is the key latency metric). Never gated.
 */
export function compareSubmetrics(
  base: RunResult | undefined,
  head: RunResult,
  tolerances: Tolerances,
): MetricDelta[] {
  const rows: MetricDelta[] = [];
  for (const key of Object.keys(head.metrics).sort()) {
    const brace = key.indexOf('{');
    if (brace <= 0 || !key.endsWith('}')) continue;
    const parent = key.slice(0, brace);
    const rule = SUBMETRIC_RULES[parent];
    if (!rule || key === K6_METRIC.httpReqDurationExpected) continue;
    const headMetric = head.metrics[key]!;
    const baseMetric = base?.metrics[key];
    rows.push(
      delta({
        id: 'submetric',
        label: key,
        source: `${key} ${rule.valueKey}`,
        unit: unitOf(rule.tolerance),
        direction: rule.direction,
        base: read(baseMetric, rule.valueKey),
        head: read(headMetric, rule.valueKey),
        gated: false,
        tolerance: tolerances[rule.tolerance],
      }),
    );
  }
  return rows;
}

const SUBMETRIC_RULES: Record<string, { valueKey: string; direction: Direction; tolerance: MetricId }> = {
  [K6_METRIC.httpReqDuration]: { valueKey: 'p(95)', direction: 'lower', tolerance: 'p95' },
  [K6_METRIC.httpReqs]: { valueKey: 'rate', direction: 'higher', tolerance: 'rps' },
  [K6_METRIC.httpReqFailed]: { valueKey: 'rate', direction: 'lower', tolerance: 'error-rate' },
  [K6_METRIC.checks]: { valueKey: 'rate', direction: 'higher', tolerance: 'checks' },
};

function unitOf(id: MetricId): ToleranceUnit {
  return KEY_METRICS.find((d) => d.id === id)!.unit;
}

function read(metric: MetricResult | undefined, key: string): number | undefined {
  return metric?.values[key];
}

/** Orders regressions worst first: gated before not gated, then by relative change (base 0 first). */
export function worstFirst(a: MetricDelta, b: MetricDelta): number {
  if (a.gated !== b.gated) return a.gated ? -1 : 1;
  const size = (d: MetricDelta) =>
    d.deltaPct === undefined ? Number.POSITIVE_INFINITY : Math.abs(d.deltaPct);
  return size(b) - size(a);
}

/** Compares head with base: key metrics, submetrics and the regressions among them. */
export function compareResults(base: RunResult, head: RunResult, options: CompareOptions): Comparison {
  const { rows, latencyKey } = compareKeyMetrics(base, head, options);
  const submetrics = compareSubmetrics(base, head, options.tolerances);
  const regressions = [...rows, ...submetrics].filter((d) => d.change === 'worse').sort(worstFirst);
  return {
    keyMetrics: rows,
    submetrics,
    regressions,
    gatedRegressions: regressions.filter((d) => d.gated),
    latencyKey,
  };
}

const UNITS_OF: Record<ToleranceUnit, string> = { ms: 'ms', pp: 'pp', '/s': '/s' };

/**
 * Parses the `tolerances` input: one entry per line (or separated by `;`), `metric: value [value]`
 * where each value is a relative tolerance (`5%`) or an absolute one in the metric's unit
 * (`2ms` for latency, `0.2pp` for error-rate and checks, `5/s` for rps). A part not given keeps its
 * default. Example: `p95: 5% 2ms`, `error-rate: 0.2pp`.
 * @throws ConfigurationError naming the entry and what is wrong.
 */
export function parseTolerances(
  text: string | undefined,
  defaults: Tolerances = DEFAULT_TOLERANCES,
): Tolerances {
  const out: Tolerances = structuredClone(defaults);
  if (!text) return out;
  for (const raw of text.split(/[\n;]/)) {
    const entry = raw.trim();
    if (!entry || entry.startsWith('#')) continue;
    const m = /^([a-z0-9-]+)\s*[:=]\s*(.+)$/i.exec(entry);
    if (!m) throw new ConfigurationError(`tolerances: "${entry}" is not "metric: value", e.g. "p95: 5% 2ms"`);
    const id = m[1]!.toLowerCase() as MetricId;
    if (!METRIC_IDS.includes(id))
      throw new ConfigurationError(`tolerances: unknown metric "${m[1]}"; use ${METRIC_IDS.join(', ')}`);
    const unit = unitOf(id);
    for (const part of m[2]!.split(/[\s,]+/).filter(Boolean)) {
      const v = /^(\d+(?:\.\d+)?)(%|ms|pp|\/s)$/.exec(part);
      if (!v || (v[2] !== '%' && v[2] !== UNITS_OF[unit]))
        throw new ConfigurationError(
          `tolerances: "${part}" for ${id} must be a percentage (5%) or ${UNITS_OF[unit]} (e.g. 2${UNITS_OF[unit]})`,
        );
      if (v[2] === '%') out[id].relativePct = Number(v[1]);
      else out[id].absolute = Number(v[1]);
    }
  }
  return out;
}

/**
 * Parses the `gate` input: metric ids separated by commas, spaces or lines, or `none`.
 * @throws ConfigurationError on an unknown id.
 */
export function parseGate(text: string | undefined): MetricId[] {
  if (text === undefined || text.trim() === '') return [...DEFAULT_GATE];
  const ids = text
    .split(/[\s,]+/)
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (ids.length === 1 && ids[0] === 'none') return [];
  for (const id of ids) {
    if (!METRIC_IDS.includes(id as MetricId))
      throw new ConfigurationError(`gate: unknown metric "${id}"; use ${METRIC_IDS.join(', ')} or none`);
  }
  return [...new Set(ids)] as MetricId[];
}

/** Tolerances as short text for the footer: `p95 10%/1ms, error-rate 10%/0.1pp`. */
export function describeTolerance(id: MetricId, t: Tolerance): string {
  return `${t.relativePct}% and ${t.absolute}${UNITS_OF[unitOf(id)]}`;
}
