import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { METRIC_IDS, parseGate } from '../../compare/compare.ts';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import {
  BUNDLE_JSON_FILE,
  bundleArtifactName,
  downloadRunArtifact,
  findRunArtifact,
} from '../../github/artifacts.ts';
import { findPullRequest } from '../../github/pulls.ts';
import { firstIssue } from '../../inputs/parse.ts';
import {
  baselineInfoSchema,
  baselineRunSchema,
  type CommentData,
  commentMarker,
  renderReportBodies,
} from '../../pr-comment/comment.ts';
import { runResultSchema } from '../../result/result.ts';
import { runUrl } from './context.ts';
import type { ReportActionInputs } from './inputs.ts';
import { emptyOutputs, judgedOutcome, postComment, type ReportDeps, type ReportOutcome } from './outcome.ts';

// The `post-bundle` mode: post a fork pull request's report bundle from a `workflow_run` workflow.

const tolerance = z.object({ relativePct: z.number().min(0), absolute: z.number().min(0) });
const bundleSchema = z.object({
  schema: z.literal('k6-distributed/report-bundle@1'),
  prNumber: z.number().int().positive(),
  headSha: z.string(),
  marker: z.object({ workflow: z.string(), job: z.string(), key: z.string() }),
  input: z.object({
    head: runResultSchema,
    base: runResultSchema.optional(),
    baseline: baselineInfoSchema.extend({ run: baselineRunSchema.omit({ url: true }).optional() }),
    options: z.object({
      title: z.string().max(200).optional(),
      gate: z.array(z.string()),
      tolerances: z.object(
        Object.fromEntries(METRIC_IDS.map((id) => [id, tolerance])) as Record<
          (typeof METRIC_IDS)[number],
          typeof tolerance
        >,
      ),
    }),
  }),
});

/**
 * Posts a fork PR's report bundle. The bundle was written by code the PR could change, so it is
 * data only: the PR number is checked against the triggering run, links are rebuilt from the
 * event, and the comment is rendered again here from the results (never the bundle's markdown).
 * This mode never fails the step on a regression: the PR run's own check does.
 */
export async function postBundle(inputs: ReportActionInputs, deps: ReportDeps): Promise<ReportOutcome> {
  const { ctx, gh, log } = deps;
  const wr = ctx.payload.workflow_run as
    | {
        id: number;
        name?: string;
        html_url?: string;
        head_sha: string;
        head_branch?: string | null;
        head_repository?: { full_name?: string } | null;
        pull_requests?: Array<{ number: number }>;
      }
    | undefined;
  if (!wr) throw new ConfigurationError(`mode: post-bundle needs a workflow_run event, not ${ctx.eventName}`);
  const outcome: ReportOutcome = { outputs: emptyOutputs('post-bundle'), annotations: [], warnings: [] };
  const run = { owner: ctx.owner, repo: ctx.repo, workflowRunId: wr.id };
  const name = bundleArtifactName(inputs.key);
  const artifact = await findRunArtifact(gh, run, name);
  if (!artifact || artifact.expired) {
    outcome.warnings.push(
      `run ${wr.id} has ${artifact ? 'an expired' : 'no'} report bundle ${name}: nothing to post (did its report step run with mode bundle and key ${inputs.key}?)`,
    );
    return outcome;
  }
  const dir = await deps.tempDir('k6d-bundle-');
  await downloadRunArtifact(deps.transfer, run, artifact.id, deps.token, dir);
  const bundle = await readBundle(path.join(dir, BUNDLE_JSON_FILE), `report bundle ${name} of run ${wr.id}`);

  const found = await findPullRequest(
    gh,
    {
      owner: ctx.owner,
      repo: ctx.repo,
      headSha: wr.head_sha,
      ...(wr.head_branch ? { headBranch: wr.head_branch } : {}),
      ...(wr.head_repository?.full_name ? { headRepository: wr.head_repository.full_name } : {}),
      eventPullNumbers: (wr.pull_requests ?? []).map((p) => p.number),
    },
    bundle.prNumber,
    log,
  );
  const b = bundle.input;
  const { run: baselineRun, ...baseline } = b.baseline;
  const input: CommentData = {
    head: b.head,
    ...(b.base ? { base: b.base } : {}),
    baseline: {
      ...baseline,
      ...(baselineRun ? { run: { ...baselineRun, url: runUrl(ctx, baselineRun.id) } } : {}),
    },
    options: {
      key: inputs.key,
      gate: parseGate(b.options.gate.join(',') || 'none'),
      tolerances: b.options.tolerances,
      ...(b.options.title ? { title: b.options.title } : {}),
    },
    links: { runUrl: wr.html_url ?? runUrl(ctx, wr.id), headSha: wr.head_sha },
  };
  const marker = commentMarker({ workflow: bundle.marker.workflow, job: bundle.marker.job, key: inputs.key });
  const rendered = renderReportBodies(input, marker);
  await deps.writeSummary(rendered.summary.text);
  const judged = judgedOutcome('post-bundle', { failOnRegression: false }, input, rendered);
  Object.assign(outcome.outputs, judged.outputs);
  outcome.annotations = judged.annotations;
  if (!found) {
    outcome.warnings.push(
      `no open pull request has head ${wr.head_sha} (run ${wr.id}): nothing to comment on`,
    );
    return outcome;
  }
  log(`pull request #${found.number} (found by ${found.how})`);
  await postComment(
    gh,
    { owner: ctx.owner, repo: ctx.repo, issueNumber: found.number, marker, author: inputs.commentAuthor },
    rendered.comment.text,
    outcome,
    log,
    'give this workflow "permissions: pull-requests: write"',
  );
  return outcome;
}

async function readBundle(file: string, what: string): Promise<z.infer<typeof bundleSchema>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${what}: cannot read ${BUNDLE_JSON_FILE} (${errorMessage(error)})`);
  }
  const parsed = bundleSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(`${what} is not a report bundle (${firstIssue(parsed.error)})`);
  }
  return parsed.data;
}
