import { K6_METRIC, metricContains } from '../k6/metrics.ts';
import type { RunnerMetric, RunnerSummary } from '../k6/summary.ts';
import { percentileKey } from '../k6/thresholds-parser.ts';
import { REPORTED_PERCENTILES } from './quantile-grid.ts';
import { mergePercentiles } from './quantiles.ts';
import type { CheckResult, GroupResult, MetricContains, MetricResult } from './schema.ts';

/** Options of {@link aggregateSummaries}. */
export interface AggregateOptions {
  /** The run's wall-clock window in s: counters' `rate` is their global count over it. */
  durationS: number;
  /** Extra percentiles (in percent) to compute for every trend, e.g. those the thresholds use. */
  percentiles?: readonly number[];
  /** `contains` per base metric name, as the runners' `/v1/metrics` reported it. */
  contains?: Record<string, MetricContains>;
  /**
   * Gauges the orchestrator sampled for the whole test while it ran, by metric name (`vus`: the sum
   * of the runners' active VUs, once a second): with at least one sample, the gauge's `value` is
   * the last sample and `min`/`max` are over the samples, as k6 reports its own samples.
   */
  sampledGauges?: Record<string, readonly number[]>;
  /**
   * Which trends get `percentileBands` (two more merges per percentile of `percentiles`): by metric
   * key; default every trend. The run gives the trends a threshold judges by a percentile and the
   * latency trends (see `bandedTrends` in k6/thresholds.ts): at 1,000 runners each band costs as
   * much as a reported percentile (bench/results/scale.md).
   */
  bands?: (name: string) => boolean;
}

/** Gauges whose global value is the sum of the runners' values (each runner holds its own VUs). */
const SUMMED_GAUGES = new Set<string>([K6_METRIC.vus, K6_METRIC.vusMax]);

/**
 * Merges the runners' summaries into one global set of metrics, the way one k6 process running
 * the whole test would have reported them:
 * - counter: `count` summed; `rate` = count / `durationS`;
 * - rate: `passes` and `fails` summed; `rate` = passes / (passes + fails), 0 with no samples;
 * - gauge: a gauge in `options.sampledGauges` (`vus`) from those samples of the whole test; else
 *   `vus`/`vus_max` summed (value, min and max: each runner holds its own VUs; exact for `vus_max`,
 *   which only grows; for `vus` the runners' summaries also hold samples of their paused wait and
 *   their linger, so its sums are only bounds: `max` lies between the largest runner max and the
 *   sum). Other gauges: runners without a sample are left out (k6 exports a gauge that has a
 *   threshold but no sample as 0/0/0), then `min` of mins, `max` of maxes and the largest value (a
 *   runner's last value is all a summary holds, and which runner was last is unknown);
 * - trend: `count` summed, exact `min`/`max`, `avg` weighted by count, and `med` and every `p(N)` from
 *   the runners' quantile grids merged as CDFs (quantiles.ts), never averaged.
 * Submetrics (`name{tag:value}`) are merged like their metric.
 * @returns metrics keyed by name; trends carry p(50), p(90), p(95), p(99), p(99.9), p(99.99) and
 *   `options.percentiles`.
 */
export function aggregateSummaries(
  summaries: readonly RunnerSummary[],
  options: AggregateOptions,
): Record<string, MetricResult> {
  const byName = new Map<string, RunnerMetric[]>();
  for (const summary of summaries) {
    for (const [name, metric] of Object.entries(summary.metrics)) {
      const list = byName.get(name) ?? [];
      list.push(metric);
      byName.set(name, list);
    }
  }
  const percents = [...new Set([...REPORTED_PERCENTILES, ...(options.percentiles ?? [])])].sort(
    (a, b) => a - b,
  );
  const out: Record<string, MetricResult> = {};
  for (const name of [...byName.keys()].sort()) {
    const parts = byName.get(name)!;
    const type = parts[0]!.type;
    const same = parts.filter((p) => p.type === type);
    const contains = metricContains(name, type, options.contains);
    const samples = options.sampledGauges?.[name];
    const values =
      type === 'gauge' && samples && samples.length > 0
        ? { value: samples.at(-1)!, min: Math.min(...samples), max: Math.max(...samples) }
        : mergeValues(name, same, percents, options.durationS);
    out[name] = { type, contains, values };
    const banded = type === 'trend' && (options.bands?.(name) ?? true);
    const bands = banded ? percentileBands(same, options.percentiles ?? []) : undefined;
    if (bands) out[name]!.percentileBands = bands;
  }
  return out;
}

function mergeValues(
  name: string,
  parts: RunnerMetric[],
  percents: readonly number[],
  durationS: number,
): Record<string, number> {
  const first = parts[0]!;
  switch (first.type) {
    case 'counter': {
      const count = sum(parts.map((p) => (p.type === 'counter' ? p.count : 0)));
      return { count, rate: durationS > 0 ? count / durationS : 0 };
    }
    case 'rate': {
      const passes = sum(parts.map((p) => (p.type === 'rate' ? p.passes : 0)));
      const fails = sum(parts.map((p) => (p.type === 'rate' ? p.fails : 0)));
      return { rate: passes + fails > 0 ? passes / (passes + fails) : 0, passes, fails };
    }
    case 'gauge': {
      const gauges = parts.flatMap((p) => (p.type === 'gauge' ? [p] : []));
      if (SUMMED_GAUGES.has(name.split('{')[0]!)) {
        // Each runner holds its own VUs: sums (for `vus`, max is an upper bound when the runners
        // peaked at different moments; `vus_max` is fixed after init, so its sums are exact).
        return {
          value: sum(gauges.map((g) => g.value)),
          min: sum(gauges.map((g) => g.min)),
          max: sum(gauges.map((g) => g.max)),
        };
      }
      // 0/0/0 is how an unsampled gauge looks; a runner whose samples were all 0 looks the same and
      // is left out too, which changes nothing unless every sampled runner's values are of one sign.
      const sampled = gauges.filter((g) => g.value !== 0 || g.min !== 0 || g.max !== 0);
      const from = sampled.length > 0 ? sampled : gauges;
      return {
        value: Math.max(...from.map((g) => g.value)),
        min: Math.min(...from.map((g) => g.min)),
        max: Math.max(...from.map((g) => g.max)),
      };
    }
    case 'trend': {
      const trends = parts.flatMap((p) => (p.type === 'trend' && p.count > 0 ? [p] : []));
      const count = sum(trends.map((t) => t.count));
      const values: Record<string, number> = { count, min: 0, max: 0, avg: 0, med: 0 };
      for (const p of percents) values[percentileKey(p)] = 0;
      if (count === 0) return values;
      values.min = Math.min(...trends.map((t) => t.min));
      values.max = Math.max(...trends.map((t) => t.max));
      values.avg = sum(trends.map((t) => t.avg * t.count)) / count;
      // The median is p(50): merged once when both are wanted.
      const wanted = percents.includes(50) ? percents : [50, ...percents];
      const merged = mergePercentiles(
        trends.map((t) => t.grid),
        wanted,
      );
      wanted.forEach((p, i) => {
        values[percentileKey(p)] = merged[i]!;
      });
      values.med = merged[wanted.indexOf(50)]!;
      if (!percents.includes(50)) delete values[percentileKey(50)];
      return values;
    }
  }
}

/** Rank error the merge is held to, in percentage points (the band a threshold is uncertain in). */
const BAND_POINTS = 0.02;

/** For each threshold percentile, the merged values at p ∓ 0.02 points; undefined without samples. */
function percentileBands(
  parts: readonly RunnerMetric[],
  percents: readonly number[],
): Record<string, [number, number]> | undefined {
  const grids = parts.flatMap((p) => (p.type === 'trend' && p.count > 0 ? [p.grid] : []));
  if (grids.length === 0 || percents.length === 0) return undefined;
  const edges = mergePercentiles(
    grids,
    percents.flatMap((p) => [Math.max(0, p - BAND_POINTS), Math.min(100, p + BAND_POINTS)]),
  );
  return Object.fromEntries(percents.map((p, i) => [percentileKey(p), [edges[2 * i]!, edges[2 * i + 1]!]]));
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/**
 * Merges the runners' group trees (handleSummary `root_group`): groups matched by path, checks by
 * path, passes and fails summed. Order is the order of first appearance.
 */
export function mergeGroups(groups: readonly GroupResult[]): GroupResult {
  const first = groups[0] ?? { name: '', path: '', groups: [], checks: [] };
  const checks = new Map<string, CheckResult>();
  for (const g of groups) {
    for (const c of g.checks) {
      const seen = checks.get(c.path);
      if (seen) {
        seen.passes += c.passes;
        seen.fails += c.fails;
      } else checks.set(c.path, { ...c });
    }
  }
  const childPaths: string[] = [];
  const children = new Map<string, GroupResult[]>();
  for (const g of groups) {
    for (const child of g.groups) {
      if (!children.has(child.path)) {
        childPaths.push(child.path);
        children.set(child.path, []);
      }
      children.get(child.path)!.push(child);
    }
  }
  return {
    name: first.name,
    path: first.path,
    groups: childPaths.map((p) => mergeGroups(children.get(p)!)),
    checks: [...checks.values()],
  };
}
