import type { BaseHistory, BaselineInfo, HistoryRun } from '../compare/baseline.ts';
import { type Comparison, compareResults } from '../compare/compare.ts';
import { type EnvironmentDifference, environmentDifferences } from '../compare/environment.ts';
import { applyHistory } from '../compare/history.ts';
import type { MetricId, Tolerances } from '../compare/judgement.ts';
import type { RunResult } from '../result/schema.ts';

/**
 * The pull request report's verdict against the baseline: what a report is made from
 * ({@link CommentData}) and what it concludes ({@link judge}). Pure: no GitHub calls.
 */

/**
 * The report's verdict against the baseline (the run's own threshold verdict is separate):
 * - `passed`: no gated metric is worse beyond its tolerance;
 * - `regressed`: at least one gated metric is;
 * - `no-baseline`: nothing to compare with yet;
 * - `baseline-expired`: the newest baseline's artifact expired;
 * - `environment-changed`: the baseline ran elsewhere (runners, image, resources, script…):
 *   deltas are shown, not judged;
 * - `inconclusive`: head's or the baseline's load generator saturated (`loadGenerator.saturated`):
 *   its figures measure the runners, so deltas are shown, not judged, and the check does not fail.
 */
export type ReportVerdict =
  | 'passed'
  | 'regressed'
  | 'no-baseline'
  | 'baseline-expired'
  | 'environment-changed'
  | 'inconclusive';

/** Everything a report is made from; a report bundle carries exactly this. */
export interface CommentData {
  head: RunResult;
  /** The baseline result, present when `baseline.state` is `found`. */
  base?: RunResult;
  baseline: BaselineInfo;
  /** The base branch's recent results; absent when not looked up (`history-runs: 0`, a `baseline` file). */
  history?: BaseHistory;
  options: {
    title?: string;
    key: string;
    gate: MetricId[];
    tolerances: Tolerances;
    /** What a changed script does to the gate ({@link SCRIPT_CHANGE_POLICIES}); default `gate`. */
    scriptChange?: ScriptChangePolicy;
    /** The `dashboard-url` input (src/render/dashboard.ts). */
    dashboardUrl?: string;
  };
  links: {
    /** The workflow run of head. */
    runUrl?: string;
    headSha?: string;
    /**
     * Set when head was measured by a fork's own workflow run (mode post-bundle): that run's page.
     * The comment then says the head figures are the fork's, as it reported them.
     */
    forkRunUrl?: string;
  };
}

/**
 * What a change of the load test script since the baseline (`scriptHash`) does to the verdict:
 * - `gate` (the default): the deltas are still judged, and the change is noted. A pull request
 *   cannot switch the regression gate off by touching the script; a deliberate change to the test
 *   becomes the baseline once merged.
 * - `ungated`: as for any other environment change, deltas are shown but not judged.
 */
export const SCRIPT_CHANGE_POLICIES = ['gate', 'ungated'] as const;
export type ScriptChangePolicy = (typeof SCRIPT_CHANGE_POLICIES)[number];

/** What the report concludes. */
export interface Judgement {
  verdict: ReportVerdict;
  comparison?: Comparison;
  environmentDiffs: EnvironmentDifference[];
  /** The history runs comparable with head (same environment), oldest first, that the gate and trend used. */
  history?: HistoryRun[];
  /** History runs left out because they ran in another environment than head. */
  historyExcluded?: number;
}

/**
 * Compares head with the baseline and decides the verdict. With a history, the key metrics are
 * judged by the noise gate (src/compare/history.ts) on the history runs that ran in head's
 * environment; below the gate's minimum history the fixed rule against the baseline applies.
 */
export function judge(input: CommentData): Judgement {
  const { head, base, baseline, options } = input;
  if (baseline.state === 'expired') return { verdict: 'baseline-expired', environmentDiffs: [] };
  if (baseline.state === 'none' || !base) return { verdict: 'no-baseline', environmentDiffs: [] };
  const environmentDiffs = environmentDifferences(base.environment, head.environment);
  const scriptGated = (options.scriptChange ?? 'gate') === 'gate';
  const judged = environmentDiffs.every((d) => scriptGated && d.field === 'scriptHash');
  // Another environment: show every delta, gate none.
  let comparison = compareResults(base, head, {
    tolerances: options.tolerances,
    gate: judged ? options.gate : [],
  });
  if (!judged) return { verdict: 'environment-changed', comparison, environmentDiffs };
  if (head.loadGenerator?.saturated || base.loadGenerator?.saturated) {
    comparison = compareResults(base, head, { tolerances: options.tolerances, gate: [] });
    return { verdict: 'inconclusive', comparison, environmentDiffs };
  }
  const all = input.history?.runs ?? [];
  const history = all.filter(
    (h) => environmentDifferences(h.result.environment, head.environment).length === 0,
  );
  if (history.length > 0)
    comparison = applyHistory(
      comparison,
      history.map((h) => h.result),
    );
  return {
    verdict: comparison.gatedRegressions.length > 0 ? 'regressed' : 'passed',
    comparison,
    environmentDiffs,
    ...(input.history ? { history, historyExcluded: all.length - history.length } : {}),
  };
}
