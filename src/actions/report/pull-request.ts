import type { BaseHistory, BaselineInfo } from '../../compare/baseline.ts';
import type { CommentData, Judgement } from '../../compare/verdict.ts';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import {
  BUNDLE_JSON_FILE,
  BUNDLE_MARKDOWN_FILE,
  baselineArtifactName,
  bundleArtifactName,
  uploadFiles,
} from '../../github/artifacts.ts';
import { findBaseline } from '../../github/baseline.ts';
import type { GitHub } from '../../github/client.ts';
import { commentMarker, type MarkerKey, renderReportBodies } from '../../pr-comment/comment.ts';
import type { Fitted } from '../../pr-comment/fit.ts';
import type { ScriptError, ScriptReportData } from '../../pr-comment/scripts.ts';
import { htmlReportPath, writeHtmlReport } from '../../render/html/file.ts';
import type { AbResult } from '../../result/ab-schema.ts';
import { readRunResult } from '../../result/read-result.ts';
import type { RunResult } from '../../result/schema.ts';
import { writeJUnitReport } from '../common/junit.ts';
import { type ActionContext, runUrl, workflowFileFromRef } from './context.ts';
import { baseHistory } from './history.ts';
import type { ReportActionInputs } from './inputs.ts';
import {
  judgedOutcome,
  type PullRequestRef,
  postComment,
  pullRequestOf,
  type ReportDeps,
  type ReportOutcome,
} from './outcome.ts';

// The `comment` and `bundle` modes: compare a pull request's run with its base branch's baseline.

/** The report bundle a fork's PR run writes for a `workflow_run` workflow to post. */
export interface ReportBundle {
  schema: 'k6-distributed/report-bundle@1';
  repository: string;
  prNumber: number;
  headSha: string;
  marker: MarkerKey;
  /** The verdict computed in the PR run (post-bundle computes it again). */
  verdict: string;
  /** The report's data; with several scripts, the first script's (a reader of one result posts it). Absent with `ab`. */
  input?: CommentData;
  /** A/B rounds (src/actions/report/ab.ts): the A/B result, whose rounds post-bundle judges again. */
  ab?: AbResult;
  /** Several scripts in one step: each script's report data, in run order. */
  scripts?: ScriptReportData[];
  /** Several scripts in one step: those without a result. */
  errors?: ScriptError[];
}

/**
 * Delivers a pull request's report: mode `comment` creates or updates the sticky comment of
 * `marker` (`comment-url`); mode `bundle` uploads the report bundle of `inputs.key` with `data`
 * and the rendered body for a person to read (`artifact-id`).
 * @param data what the bundle carries besides where it belongs.
 */
export async function deliverReport(
  mode: 'comment' | 'bundle',
  inputs: Pick<ReportActionInputs, 'key' | 'retentionDays' | 'commentAuthor'>,
  deps: ReportDeps,
  pr: PullRequestRef,
  body: string,
  outcome: ReportOutcome,
  data: Pick<ReportBundle, 'verdict' | 'input' | 'scripts' | 'errors' | 'ab'>,
): Promise<void> {
  const { ctx, log } = deps;
  const marker: MarkerKey = { workflow: ctx.workflow, job: ctx.job, key: inputs.key };
  if (mode === 'comment') {
    await postComment(
      deps.gh,
      {
        owner: ctx.owner,
        repo: ctx.repo,
        issueNumber: pr.number,
        marker: commentMarker(marker),
        author: inputs.commentAuthor,
      },
      body,
      outcome,
      log,
      "a fork's pull request gets a read-only token; the report is in the job summary, and mode bundle with a workflow_run workflow in mode post-bundle posts it as a comment",
    );
    return;
  }
  const bundle: ReportBundle = {
    schema: 'k6-distributed/report-bundle@1',
    repository: `${ctx.owner}/${ctx.repo}`,
    prNumber: pr.number,
    headSha: pr.headSha,
    marker,
    ...data,
  };
  const name = bundleArtifactName(inputs.key);
  const uploaded = await uploadFiles(
    deps.transfer,
    name,
    { [BUNDLE_JSON_FILE]: `${JSON.stringify(bundle)}\n`, [BUNDLE_MARKDOWN_FILE]: body },
    await deps.tempDir('k6d-bundle-'),
    inputs.retentionDays,
  );
  log(`wrote the report bundle ${name} (artifact ${uploaded.id ?? '?'}) for pull request #${pr.number}`);
  outcome.outputs['artifact-id'] = uploaded.id === undefined ? '' : String(uploaded.id);
}

export async function compareOnPullRequest(
  inputs: ReportActionInputs,
  deps: ReportDeps,
  mode: 'comment' | 'bundle',
): Promise<ReportOutcome> {
  const { ctx, log } = deps;
  const pr = pullRequestOf(ctx);
  if (!pr)
    throw new ConfigurationError(
      `mode: ${mode} needs a pull_request event, not ${ctx.eventName} (use store on pushes, post-bundle on workflow_run)`,
    );
  const input = await commentData(inputs, deps, pr);
  const marker: MarkerKey = { workflow: ctx.workflow, job: ctx.job, key: inputs.key };
  const rendered = renderReportBodies(input, commentMarker(marker));
  await deps.writeSummary(rendered.summary.text);
  await writeComparedHtml(inputs.resultPath, input, rendered.judgement, log);
  log(
    `report: ${rendered.judgement.verdict}; comment ${rendered.comment.text.length} characters${droppedNote(rendered.comment)}`,
  );

  const outcome = judgedOutcome(mode, inputs, input, rendered);
  outcome.outputs['junit-path'] = await writeJUnitReport(
    inputs.junitPath,
    [{ script: input.head.script, result: input.head, compared: rendered.judgement }],
    { info: log, warning: log },
  );
  await deliverReport(mode, inputs, deps, pr, rendered.comment.text, outcome, {
    verdict: rendered.judgement.verdict,
    input,
  });
  return outcome;
}

/**
 * What a pull request's report is made from: this run's result (`inputs.resultPath`), the baseline
 * of `inputs.key` on the base branch (or the `baseline` file) and its history, and the options.
 * @throws Error when the result cannot be read, or a REST call fails beyond its retries.
 */
export async function commentData(
  inputs: ReportActionInputs,
  deps: ReportDeps,
  pr: PullRequestRef,
): Promise<CommentData> {
  const head = await readRunResult(inputs.resultPath, 'result');
  return reportData(head, inputs, inputs, deps, pr, {
    runUrl: runUrl(deps.ctx, deps.ctx.workflowRunId),
    headSha: pr.headSha,
  });
}

/**
 * A report's data for `head`: the baseline that `lookup` names (its key on the base branch, or the
 * `baseline` file) and its history, read by this workflow ({@link baselineFor}), with this step's
 * own options (gate, tolerances, title, script-change policy, dashboard link) and `links`.
 * @throws Error when a REST call fails beyond its retries.
 */
export async function reportData(
  head: RunResult,
  lookup: Parameters<typeof baselineFor>[0],
  inputs: ReportActionInputs,
  deps: ReportDeps,
  pr: PullRequestRef,
  links: CommentData['links'],
): Promise<CommentData> {
  const { baseline, base, history } = await baselineFor(lookup, deps, pr);
  return {
    head,
    ...(base ? { base } : {}),
    baseline,
    ...(history ? { history } : {}),
    options: {
      key: inputs.key,
      gate: inputs.gate,
      tolerances: inputs.tolerances,
      scriptChange: inputs.scriptChange,
      ...(inputs.title ? { title: inputs.title } : {}),
      ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}),
    },
    links,
  };
}

/** ` (left out: …)` for the log when the comment left sections out, else ''. */
export function droppedNote(comment: Fitted): string {
  return comment.dropped.length > 0 ? ` (left out: ${comment.dropped.join(', ')})` : '';
}

/**
 * The baseline of `inputs.key` on the pull request's base branch (or the `baseline` file) and the
 * base branch's history, read with this run's token; also what `post-bundle` compares a fork's
 * figures with, so that no baseline comes from the fork.
 */
export async function baselineFor(
  inputs: ReportActionInputs,
  deps: ReportDeps,
  pr: PullRequestRef,
): Promise<{ baseline: BaselineInfo; base?: RunResult; history?: BaseHistory }> {
  if (inputs.baselinePath) {
    const base = await readRunResult(inputs.baselinePath, 'baseline');
    return {
      baseline: { source: 'file', state: 'found', file: inputs.baselinePath, branch: pr.baseRef },
      base,
    };
  }
  const { gh, ctx } = deps;
  const workflowId =
    inputs.baselineWorkflow ?? workflowFileFromRef(ctx.workflowRef) ?? (await currentWorkflowId(gh, ctx));
  const query = {
    owner: ctx.owner,
    repo: ctx.repo,
    workflowId,
    branch: pr.baseRef,
    ...(pr.baseSha ? { baseSha: pr.baseSha } : {}),
    headSha: pr.headSha,
    currentRunId: ctx.workflowRunId,
    artifactName: baselineArtifactName(inputs.key),
    token: deps.token,
    dir: await deps.tempDir('k6d-baseline-'),
    historyRuns: inputs.historyRuns,
  };
  const lookup = await findBaseline(gh, deps.transfer, query, deps.log);
  const found = { baseline: lookup.info, ...(lookup.result ? { base: lookup.result } : {}) };
  // The history helps only next to a baseline (an expired newest baseline means older ones are gone).
  if (inputs.historyRuns === 0 || !lookup.result || !lookup.info.run) return found;
  const run = lookup.info.run;
  const history = await baseHistory(inputs, deps, pr, {
    gh,
    transfer: deps.transfer,
    query: { ...query, dir: await deps.tempDir('k6d-history-') },
    newest: lookup.newest,
    known: {
      run: { id: run.id, sha: run.sha, ...(run.createdAt ? { createdAt: run.createdAt } : {}) },
      result: lookup.result,
    },
  });
  return { ...found, history };
}

/**
 * Writes the HTML report next to the result again, now with the comparison with the baseline
 * (the run wrote it without one). A failure is a log line: the comment does not depend on it.
 */
export async function writeComparedHtml(
  resultPath: string,
  input: CommentData,
  judgement: Judgement,
  log: (line: string) => void,
): Promise<void> {
  const file = htmlReportPath(resultPath);
  const run = input.baseline.run;
  try {
    await writeHtmlReport(file, {
      result: input.head,
      ...(judgement.comparison ? { comparison: judgement.comparison } : {}),
      ...(run ? { baselineLabel: `${input.baseline.branch ?? 'base'} @ ${run.sha.slice(0, 7)}` } : {}),
      ...(input.options.dashboardUrl ? { dashboardUrl: input.options.dashboardUrl } : {}),
    });
    log(`HTML report with the comparison written to ${file}`);
  } catch (error) {
    log(`could not write the HTML report ${file}: ${errorMessage(error)}`);
  }
}

async function currentWorkflowId(gh: GitHub, ctx: ActionContext): Promise<number> {
  const { data } = await gh.rest.actions.getWorkflowRun({
    owner: ctx.owner,
    repo: ctx.repo,
    run_id: ctx.workflowRunId,
  });
  return data.workflow_id;
}
