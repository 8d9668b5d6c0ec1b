import type { RunResult } from '../result/schema.ts';
import { type Comparison, keyMetricValue, type MetricDelta, worstFirst } from './compare.ts';
import type { MetricId } from './judgement.ts';
import { DEFAULT_NOISE_GATE, judgeWithHistory, type NoiseGateOptions } from './noise.ts';

/**
 * The history of a comparison's key metrics ({@link metricHistory}: the trend and the between-run
 * noise of src/compare/significance.ts read it), and the older noise gate ({@link applyHistory}),
 * which the report no longer uses by default (src/compare/verdict.ts judges with
 * significance.ts) and which bench/noise.ts and the calibration still measure as a mode. The gate: each key metric of head is judged against the base
 * branch's history of that metric (src/compare/noise.ts: outside the median ± k × 1.4826 × MAD
 * range on the bad side AND beyond the metric's relative and absolute tolerances, measured from the
 * history's median). With fewer than `minHistory` runs that have the metric, the metric keeps the
 * fixed rule's verdict against the baseline run (what `compareResults` gave). Submetrics are never
 * gated and keep the fixed rule.
 */

/** One metric's values across the history, oldest first, for the trend. */
export interface MetricHistory {
  id: MetricId;
  /** One value per history run (undefined where that run lacks it), in the result's unit. */
  values: Array<number | undefined>;
}

/** The key metric values of each history result, read as the comparison reads head. */
export function metricHistory(comparison: Comparison, history: readonly RunResult[]): MetricHistory[] {
  return comparison.keyMetrics.map((d) => ({
    id: d.id as MetricId,
    values: history.map((r) => keyMetricValue(d.id as MetricId, r, comparison.latencyKey)),
  }));
}

/**
 * Judges the key metrics of a comparison against the history (results of comparable base-branch
 * runs, any order) and recomputes the regressions from the new verdicts. Pure; returns a new
 * comparison.
 */
export function applyHistory(
  comparison: Comparison,
  history: readonly RunResult[],
  options: NoiseGateOptions = DEFAULT_NOISE_GATE,
): Comparison {
  const values = new Map(metricHistory(comparison, history).map((h) => [h.id, h.values]));
  const keyMetrics = comparison.keyMetrics.map((d): MetricDelta => {
    const past = (values.get(d.id as MetricId) ?? []).filter((v): v is number => v !== undefined);
    const verdict = judgeWithHistory(
      {
        history: past,
        ...(d.base === undefined ? {} : { base: d.base }),
        head: d.head,
        direction: d.direction,
        tolerance: d.tolerance,
        unit: d.unit,
      },
      options,
    );
    if (verdict.method !== 'history') return d;
    // Inside the normal range a change beyond the floors is noise, not a regression.
    const change = verdict.regressed ? 'worse' : verdict.change === 'worse' ? 'unchanged' : verdict.change;
    return { ...d, change, noise: verdict, baselineChange: d.change };
  });
  const regressions = [...keyMetrics, ...comparison.submetrics]
    .filter((d) => d.change === 'worse')
    .sort(worstFirst);
  return {
    ...comparison,
    keyMetrics,
    regressions,
    gatedRegressions: regressions.filter((d) => d.gated),
  };
}
