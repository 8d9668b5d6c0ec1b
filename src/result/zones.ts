import { K6_METRIC } from '../k6/metrics.ts';
import type { RunnerSummary } from '../k6/summary.ts';
import type { RunnerPlan, ZonePlan } from '../plan.ts';
import { type AggregateOptions, aggregateSummaries } from './aggregate.ts';
import type { ZoneResult } from './zone-schema.ts';

/** What {@link zoneResults} reads of each runner, in the plan's order. */
export interface ZoneRunner {
  plan: RunnerPlan;
  summary: RunnerSummary | undefined;
  /** When it started, in ms after the run's first runner. */
  startOffsetMs: number;
  /** Whether it completed its segment (the result's `runners[i].ok`). */
  ok: boolean;
}

/**
 * The per-zone breakdown of a run (`zones` of the result, src/result/zone-schema.ts): each zone's
 * runners' summaries merged with the run's own merge ({@link aggregateSummaries}, with the same
 * options, so counters' rates are over the run's window and the zones' figures add up to the
 * run's), and its start skew from its runners' start offsets.
 * @param zones the plan's zones; `runners` every runner of the run in the plan's order.
 */
export function zoneResults(
  zones: readonly ZonePlan[],
  runners: readonly ZoneRunner[],
  options: AggregateOptions,
): ZoneResult[] {
  return zones.map((zone) => {
    const own = runners.map((r, i) => ({ ...r, i })).filter((r) => r.plan.zone === zone.name);
    const metrics = aggregateSummaries(
      own.flatMap((r) => (r.summary ? [r.summary] : [])),
      // The vus samples are the whole run's: not a zone's.
      { ...options, sampledGauges: {} },
    );
    const offsets = own.map((r) => r.startOffsetMs);
    const count = (name: string) => metrics[name]?.values.count ?? 0;
    const result: ZoneResult = {
      name: zone.name,
      share: zone.share,
      runners: own.map((r) => r.i),
      runnersOk: own.filter((r) => r.ok).length,
      startSkewMs: offsets.length > 0 ? Math.max(...offsets) - Math.min(...offsets) : 0,
      startOffsetMs: offsets.length > 0 ? Math.min(...offsets) : 0,
      requests: count(K6_METRIC.httpReqs),
      rps: options.durationS > 0 ? count(K6_METRIC.httpReqs) / options.durationS : 0,
      iterations: count(K6_METRIC.iterations),
    };
    const failed = metrics[K6_METRIC.httpReqFailed]?.values;
    if (failed && (failed.passes ?? 0) + (failed.fails ?? 0) > 0) result.errorRate = failed.rate ?? 0;
    const d = metrics[K6_METRIC.httpReqDuration]?.values;
    if (d && (d.count ?? 0) > 0) {
      result.latencyMs = {
        avg: d.avg ?? 0,
        med: d.med ?? 0,
        p90: d['p(90)'] ?? 0,
        p95: d['p(95)'] ?? 0,
        p99: d['p(99)'] ?? 0,
        max: d.max ?? 0,
      };
    }
    return result;
  });
}
