import type { MetricDelta } from '../../compare/compare.ts';
import type { CommentData, Judgement } from '../../compare/verdict.ts';
import { errorMessage } from '../../errors.ts';
import type { ArtifactTransfer } from '../../github/artifacts.ts';
import { type GitHub, httpStatus } from '../../github/client.ts';
import { type StickyCommentTarget, upsertComment } from '../../github/comments.ts';
import type { RenderedReport } from '../../pr-comment/comment.ts';
import type { RenderedScriptsReport, ScriptError, ScriptReportData } from '../../pr-comment/scripts.ts';
import { describeDelta, formatDelta, formatDeltaInterval } from '../../render/delta.ts';
import type { ActionContext } from './context.ts';
import type { Mode, ReportActionInputs } from './inputs.ts';

/** What every mode of the report action returns, and the parts the modes share. */

/** A mode after `auto` is resolved. */
export type ResolvedMode = Exclude<Mode, 'auto'>;

/** What the logic needs from outside. */
export interface ReportDeps {
  gh: GitHub;
  transfer: ArtifactTransfer;
  token: string;
  ctx: ActionContext;
  /** A line for the step log. */
  log: (line: string) => void;
  /** Writes the job summary (markdown). */
  writeSummary: (markdown: string) => Promise<void>;
  /** A fresh empty folder. */
  tempDir: (prefix: string) => Promise<string>;
}

/** Every output of action.yml, always set ('' when it does not apply). */
export interface ReportOutputs {
  mode: ResolvedMode;
  verdict: string;
  'run-verdict': string;
  regressions: string;
  'baseline-sha': string;
  'baseline-run-id': string;
  'comment-url': string;
  'artifact-id': string;
  'junit-path': string;
}

/** An annotation on the run's summary page. */
export interface Annotation {
  level: 'error' | 'warning';
  title: string;
  message: string;
}

/** What the runner applies. */
export interface ReportOutcome {
  outputs: ReportOutputs;
  annotations: Annotation[];
  /** One-line warnings (a 403 on a fork, a missing bundle). */
  warnings: string[];
  /** Set when the step must fail (a gated regression with `fail-on-regression`, an inconclusive verdict with `fail-on-inconclusive`). */
  failure?: string;
}

/** At most this many regression annotations (GitHub shows 10 per kind and step). */
export const MAX_ANNOTATIONS = 10;

export function emptyOutputs(mode: ResolvedMode): ReportOutputs {
  return {
    mode,
    verdict: '',
    'run-verdict': '',
    regressions: '[]',
    'baseline-sha': '',
    'baseline-run-id': '',
    'comment-url': '',
    'artifact-id': '',
    'junit-path': '',
  };
}

export interface PullRequestRef {
  number: number;
  baseRef: string;
  baseSha?: string;
  headSha: string;
  fromFork: boolean;
}

export function pullRequestOf(ctx: ActionContext): PullRequestRef | undefined {
  const pr = ctx.payload.pull_request as
    | {
        number: number;
        base: { ref: string; sha?: string; repo?: { full_name?: string } };
        head: { sha: string; repo?: { full_name?: string } | null };
      }
    | undefined;
  if (!pr) return undefined;
  const baseRepo = pr.base.repo?.full_name ?? `${ctx.owner}/${ctx.repo}`;
  return {
    number: pr.number,
    baseRef: pr.base.ref,
    ...(pr.base.sha ? { baseSha: pr.base.sha } : {}),
    headSha: pr.head.sha,
    fromFork: pr.head.repo?.full_name?.toLowerCase() !== baseRepo.toLowerCase(),
  };
}

/** What a regression's annotation says: the change, its interval and the noise model that judged it. */
function regressionMessage(d: MetricDelta, counts: boolean): string {
  const tail = counts ? '' : ' (not gated)';
  if (d.judgement)
    return `${describeDelta(d)}; interval of the change ${formatDeltaInterval(d)}; noise: ${d.judgement.noise.text}${tail}`;
  return `${describeDelta(d)}, beyond the tolerance of ${d.tolerance.relativePct}% and ${d.tolerance.absolute}${d.unit === '/s' ? '/s' : d.unit === 'pp' ? ' pp' : 'ms'}${tail}`;
}

/** The warning of an inconclusive verdict: why, and what would settle it. */
function inconclusiveWarning(input: CommentData, judgement: Judgement): string {
  if (judgement.inconclusiveBecause === 'saturated')
    return `not judged: the load generator saturated (${[input.head, input.base].flatMap((r) => r?.loadGenerator?.reasons ?? []).join('; ')}); give it more VUs (maxVUs), fewer runners per node or a larger runner`;
  const open = (judgement.comparison?.keyMetrics ?? []).filter(
    (d) => d.gated && d.judgement?.verdict === 'inconclusive',
  );
  const { settle } = judgement;
  return `inconclusive: ${open.map((d) => `${d.label} ${formatDelta(d)}, interval ${formatDeltaInterval(d)}`).join('; ')} could be within or beyond the tolerance${settle ? `; settle it with ${settle}` : ''}`;
}

/**
 * Outputs, annotations and failure of a judged report. The step fails on `regressed` with
 * `fail-on-regression`, and on `inconclusive` only with `fail-on-inconclusive`.
 */
export function judgedOutcome(
  mode: ResolvedMode,
  inputs: Pick<ReportActionInputs, 'failOnRegression'> &
    Partial<Pick<ReportActionInputs, 'failOnInconclusive'>>,
  input: CommentData,
  rendered: Pick<RenderedReport, 'judgement'>,
): ReportOutcome {
  const { judgement } = rendered;
  const regressions = judgement.comparison?.regressions ?? [];
  const failing = judgement.verdict === 'regressed' && inputs.failOnRegression;
  const failingInconclusive = judgement.verdict === 'inconclusive' && inputs.failOnInconclusive === true;
  const annotations: Annotation[] = regressions.slice(0, MAX_ANNOTATIONS).map((d) => ({
    // Errors only when the step fails; the worst come first, at most MAX_ANNOTATIONS.
    level: failing && d.gated ? 'error' : 'warning',
    title: `k6 regression: ${d.label}`,
    message: regressionMessage(d, d.gated && judgement.judged),
  }));
  const run = input.baseline.state === 'found' ? input.baseline.run : undefined;
  const outcome: ReportOutcome = {
    outputs: {
      ...emptyOutputs(mode),
      verdict: judgement.verdict,
      'run-verdict': input.head.verdict,
      regressions: JSON.stringify(regressions.map(regressionJson)),
      'baseline-sha': run?.sha ?? '',
      'baseline-run-id': run ? String(run.id) : '',
    },
    annotations,
    // Inconclusive fails the check only with fail-on-inconclusive: it says why, and what would settle it.
    warnings: judgement.verdict === 'inconclusive' ? [inconclusiveWarning(input, judgement)] : [],
  };
  const against = input.baseline.branch ? ` against ${input.baseline.branch}` : '';
  if (failing)
    outcome.failure = `performance regressed${against}: ${judgement.comparison!.gatedRegressions.map(describeDelta).join('; ')}`;
  else if (failingInconclusive)
    outcome.failure = `performance ${inconclusiveWarning(input, judgement)}${against} (fail-on-inconclusive)`;
  return outcome;
}

/**
 * Outputs, annotations and failure of several scripts judged in one report: the overall verdict,
 * `run-verdict` `failed` when any script failed or has no result, every script's regressions with
 * its `script`, the first baseline found, annotations titled with their script (at most
 * {@link MAX_ANNOTATIONS}), and a failure naming each script that regressed.
 */
export function scriptsOutcome(
  mode: ResolvedMode,
  inputs: Pick<ReportActionInputs, 'failOnRegression'> &
    Partial<Pick<ReportActionInputs, 'failOnInconclusive'>>,
  parts: ScriptReportData[],
  rendered: Pick<RenderedScriptsReport, 'judgements' | 'verdict'>,
  errors: ScriptError[],
): ReportOutcome {
  const perScript = parts.map((p, i) =>
    judgedOutcome(mode, inputs, p.input, { judgement: rendered.judgements[i]! }),
  );
  const found = perScript.find((o) => o.outputs['baseline-run-id'] !== '');
  const failures = perScript.flatMap((o, i) => (o.failure ? [`${parts[i]!.script}: ${o.failure}`] : []));
  return {
    outputs: {
      ...emptyOutputs(mode),
      verdict: rendered.verdict,
      'run-verdict': scriptsRunVerdict(
        parts.map((p) => p.input.head.verdict),
        errors,
      ),
      regressions: JSON.stringify(
        perScript.flatMap((o, i) =>
          (JSON.parse(o.outputs.regressions) as object[]).map((r) => ({ script: parts[i]!.script, ...r })),
        ),
      ),
      'baseline-sha': found?.outputs['baseline-sha'] ?? '',
      'baseline-run-id': found?.outputs['baseline-run-id'] ?? '',
    },
    annotations: perScript
      .flatMap((o, i) => o.annotations.map((a) => ({ ...a, title: `${a.title} (${parts[i]!.script})` })))
      .slice(0, MAX_ANNOTATIONS),
    warnings: [],
    ...(failures.length > 0 ? { failure: failures.join('; ') } : {}),
  };
}

/** The `run-verdict` of several scripts: `failed` when any failed its thresholds or has no result. */
export function scriptsRunVerdict(verdicts: string[], errors: readonly unknown[]): string {
  return errors.length === 0 && verdicts.every((v) => v === 'passed') ? 'passed' : 'failed';
}

/**
 * One regression in the `regressions` output. `base`, `head`, `delta`, `interval` (`[low, high]`
 * of the change) and `tolerance` are in the result's units: ms for latency, requests per second
 * for rps, a fraction (0-1) for rates.
 */
function regressionJson(d: MetricDelta) {
  return {
    metric: d.id === 'submetric' ? d.label : d.id,
    source: d.source,
    base: d.base,
    head: d.head,
    delta: d.delta,
    deltaPercent: d.deltaPct,
    unit: d.unit === 'pp' ? 'fraction' : d.unit,
    gated: d.gated,
    // Key metrics: the interval of the change (one-sided 95% bounds) and the tolerance it was held to.
    ...(d.judgement ? { interval: d.judgement.interval, tolerance: d.judgement.tolerance } : {}),
  };
}

/**
 * Creates or updates the sticky comment and sets the `comment-url` output. A 403 (a read-only
 * token) becomes a warning that ends with `forbiddenHint`; any other error is thrown.
 */
export async function postComment(
  gh: GitHub,
  target: StickyCommentTarget,
  body: string,
  outcome: ReportOutcome,
  log: (line: string) => void,
  forbiddenHint: string,
): Promise<void> {
  try {
    const comment = await upsertComment(gh, target, body);
    log(`${comment.action} comment ${comment.url}`);
    outcome.outputs['comment-url'] = comment.url;
  } catch (error) {
    if (httpStatus(error) !== 403) throw error;
    outcome.warnings.push(
      `could not comment on pull request #${target.issueNumber} (403 ${errorMessage(error)}): ${forbiddenHint}`,
    );
  }
}
