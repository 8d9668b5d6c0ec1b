import { ConfigurationError } from '../../errors.ts';
import {
  BUNDLE_JSON_FILE,
  BUNDLE_MARKDOWN_FILE,
  baselineArtifactName,
  bundleArtifactName,
  uploadFiles,
} from '../../github/artifacts.ts';
import { findBaseline } from '../../github/baseline.ts';
import type { GitHub } from '../../github/client.ts';
import {
  type BaselineInfo,
  type CommentData,
  commentMarker,
  type MarkerKey,
  type RenderedReport,
  renderReportBodies,
} from '../../pr-comment/comment.ts';
import { readRunResult } from '../../result/read-result.ts';
import type { RunResult } from '../../result/result.ts';
import { type ActionContext, runUrl, workflowFileFromRef } from './context.ts';
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
  input: CommentData;
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
  const head = await readRunResult(inputs.resultPath, 'result');
  const { baseline, base } = await baselineFor(inputs, deps, pr);
  const input: CommentData = {
    head,
    ...(base ? { base } : {}),
    baseline,
    options: {
      key: inputs.key,
      gate: inputs.gate,
      tolerances: inputs.tolerances,
      ...(inputs.title ? { title: inputs.title } : {}),
    },
    links: { runUrl: runUrl(ctx, ctx.workflowRunId), headSha: pr.headSha },
  };
  const marker: MarkerKey = { workflow: ctx.workflow, job: ctx.job, key: inputs.key };
  const rendered = renderReportBodies(input, commentMarker(marker));
  await deps.writeSummary(rendered.summary.text);
  log(
    `report: ${rendered.judgement.verdict}; comment ${rendered.comment.text.length} characters${droppedNote(rendered)}`,
  );

  const outcome = judgedOutcome(mode, inputs, input, rendered);
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
      rendered.comment.text,
      outcome,
      log,
      "a fork's pull request gets a read-only token; the report is in the job summary, and mode bundle with a workflow_run workflow in mode post-bundle posts it as a comment",
    );
  } else {
    const bundle: ReportBundle = {
      schema: 'k6-distributed/report-bundle@1',
      repository: `${ctx.owner}/${ctx.repo}`,
      prNumber: pr.number,
      headSha: pr.headSha,
      marker,
      verdict: rendered.judgement.verdict,
      input,
    };
    const name = bundleArtifactName(inputs.key);
    const uploaded = await uploadFiles(
      deps.transfer,
      name,
      { [BUNDLE_JSON_FILE]: `${JSON.stringify(bundle)}\n`, [BUNDLE_MARKDOWN_FILE]: rendered.comment.text },
      await deps.tempDir('k6d-bundle-'),
      inputs.retentionDays,
    );
    log(`wrote the report bundle ${name} (artifact ${uploaded.id ?? '?'}) for pull request #${pr.number}`);
    outcome.outputs['artifact-id'] = uploaded.id === undefined ? '' : String(uploaded.id);
  }
  return outcome;
}

function droppedNote(r: RenderedReport): string {
  return r.comment.dropped.length > 0 ? ` (left out: ${r.comment.dropped.join(', ')})` : '';
}

async function baselineFor(
  inputs: ReportActionInputs,
  deps: ReportDeps,
  pr: PullRequestRef,
): Promise<{ baseline: BaselineInfo; base?: RunResult }> {
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
  const lookup = await findBaseline(
    gh,
    deps.transfer,
    {
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
    },
    deps.log,
  );
  return { baseline: lookup.info, ...(lookup.result ? { base: lookup.result } : {}) };
}

async function currentWorkflowId(gh: GitHub, ctx: ActionContext): Promise<number> {
  const { data } = await gh.rest.actions.getWorkflowRun({
    owner: ctx.owner,
    repo: ctx.repo,
    run_id: ctx.workflowRunId,
  });
  return data.workflow_id;
}
