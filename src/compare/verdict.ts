import type { RunResult } from '../result/schema.ts';
import type { BaseHistory, BaselineInfo, HistoryRun } from './baseline.ts';
import { type Comparison, compareResults } from './compare.ts';
import { type EnvironmentDifference, environmentDifferences } from './environment.ts';
import type { MetricId, Tolerances } from './judgement.ts';
import { applySignificance, DEFAULT_VERDICT_MODEL, type VerdictModel } from './significance.ts';

/**
 * The pull request report's verdict against the baseline: what a report is made from
 * ({@link CommentData}) and what it concludes ({@link judge}). The decision is made here, once;
 * src/pr-comment/ and src/render/ only show it. Pure: no GitHub calls.
 */

/**
 * The report's verdict against the baseline (the run's own threshold verdict is separate):
 * - `passed` (shown as "No regression"): every gated metric is shown to be within its tolerance,
 *   or better (src/compare/significance.ts);
 * - `regressed`: at least one gated metric is worse beyond its tolerance and significantly so;
 * - `inconclusive`: neither can be said: a gated metric's interval straddles its tolerance
 *   (`inconclusiveBecause: 'uncertain'`: the judgement says what would settle it), or head's or the
 *   baseline's load generator saturated (`'saturated'`: the deltas measure the runners, so they are
 *   shown, not judged). It fails the check only with the `fail-on-inconclusive` input;
 * - `no-baseline`: nothing to compare with yet;
 * - `baseline-expired`: the newest baseline's artifact expired;
 * - `environment-changed`: the baseline ran elsewhere (runners, image, resources, script…):
 *   deltas are shown, not judged.
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
  /** `true` when the deltas were judged (`passed`, `regressed`, or `inconclusive` by uncertainty). */
  judged: boolean;
  /** With `inconclusive`: the load generator saturated, or the intervals straddle a tolerance. */
  inconclusiveBecause?: 'saturated' | 'uncertain';
  /** With `uncertain`: what would settle every open gated metric (the most demanding one's remedy). */
  settle?: string;
  /** The one-sided levels it judged at (fractions): `regressed` and `no regression`. */
  levels: { regressed: number; noRegression: number };
  comparison?: Comparison;
  environmentDiffs: EnvironmentDifference[];
  /** The history runs comparable with head (same environment), oldest first, that the gate and trend used. */
  history?: HistoryRun[];
  /** History runs left out because they ran in another environment than head. */
  historyExcluded?: number;
}

/**
 * Compares head with the baseline and decides the verdict: every key metric gets the three-way
 * statistical judgement (src/compare/significance.ts: both runs' own intervals, plus a between-run
 * noise from the history runs that ran in head's environment, or the default floor). The entry the
 * calibration benchmark calls to judge one head against one base (and an optional history) with
 * the default options; `model` lets it tune the levels and the between-run noise floors.
 */
export function judge(input: CommentData, model: VerdictModel = DEFAULT_VERDICT_MODEL): Judgement {
  const { head, base, baseline, options } = input;
  const levels = { regressed: model.regressionConfidence, noRegression: model.noRegressionConfidence };
  if (baseline.state === 'expired')
    return { verdict: 'baseline-expired', judged: false, levels, environmentDiffs: [] };
  if (baseline.state === 'none' || !base)
    return { verdict: 'no-baseline', judged: false, levels, environmentDiffs: [] };
  const environmentDiffs = environmentDifferences(base.environment, head.environment);
  const scriptGated = (options.scriptChange ?? 'gate') === 'gate';
  const comparable = environmentDiffs.every((d) => scriptGated && d.field === 'scriptHash');
  const saturated = head.loadGenerator?.saturated === true || base.loadGenerator?.saturated === true;
  const all = input.history?.runs ?? [];
  const history = all.filter(
    (h) => environmentDifferences(h.result.environment, head.environment).length === 0,
  );
  // Another environment or a saturated generator: show every delta and its interval, gate none.
  const gate = comparable && !saturated ? options.gate : [];
  const comparison = applySignificance(
    compareResults(base, head, { tolerances: options.tolerances, gate }),
    head,
    base,
    history.map((h) => h.result),
    model,
  );
  const withHistory = input.history ? { history, historyExcluded: all.length - history.length } : {};
  if (!comparable)
    return { verdict: 'environment-changed', judged: false, levels, comparison, environmentDiffs };
  if (saturated)
    return {
      verdict: 'inconclusive',
      judged: false,
      levels,
      inconclusiveBecause: 'saturated',
      comparison,
      environmentDiffs,
      ...withHistory,
    };
  const uncertain = comparison.keyMetrics.some((d) => d.gated && d.judgement?.verdict === 'inconclusive');
  const verdict: ReportVerdict =
    comparison.gatedRegressions.length > 0 ? 'regressed' : uncertain ? 'inconclusive' : 'passed';
  const open = comparison.keyMetrics.flatMap((d) =>
    d.gated && d.judgement?.verdict === 'inconclusive' ? [d.judgement] : [],
  );
  const hardest = open.sort((a, b) => (b.settleFactor ?? 0) - (a.settleFactor ?? 0))[0];
  return {
    verdict,
    judged: true,
    levels,
    ...(verdict === 'inconclusive' ? { inconclusiveBecause: 'uncertain' as const } : {}),
    ...(verdict === 'inconclusive' && hardest?.settle ? { settle: hardest.settle } : {}),
    comparison,
    environmentDiffs,
    ...withHistory,
  };
}
