import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { baselineInfoSchema, baselineRunSchema } from '../../compare/baseline.ts';
import { parseGate } from '../../compare/compare.ts';
import { METRIC_IDS } from '../../compare/judgement.ts';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import {
  BUNDLE_JSON_FILE,
  bundleArtifactName,
  downloadRunArtifact,
  findRunArtifact,
} from '../../github/artifacts.ts';
import { findPullRequest } from '../../github/pulls.ts';
import { firstIssue } from '../../inputs/parse.ts';
import { commentMarker, renderReportBodies } from '../../pr-comment/comment.ts';
import type { CommentData } from '../../pr-comment/judge.ts';
import { renderScriptsReportBodies } from '../../pr-comment/scripts.ts';
import { defaultTitle } from '../../pr-comment/sections.ts';
import { checkJsonDepth } from '../../result/read-result.ts';
import { runResultSchema } from '../../result/schema.ts';
import { runUrl } from './context.ts';
import type { ReportActionInputs } from './inputs.ts';
import {
  emptyOutputs,
  judgedOutcome,
  postComment,
  type ReportDeps,
  type ReportOutcome,
  scriptsOutcome,
} from './outcome.ts';

// The `post-bundle` mode: post a fork pull request's report bundle from a `workflow_run` workflow.

const tolerance = z.object({ relativePct: z.number().min(0), absolute: z.number().min(0) });
/** One report's data in a bundle (CommentData as a fork wrote it: checked, links not kept). */
const inputSchema = z.object({
  head: runResultSchema,
  base: runResultSchema.optional(),
  baseline: baselineInfoSchema.extend({ run: baselineRunSchema.omit({ url: true }).optional() }),
  history: z
    .object({
      runs: z
        .array(
          z.object({
            run: z.object({
              id: z.number().int(),
              sha: z.string().regex(/^[0-9a-f]{7,64}$/),
              createdAt: z.string().optional(),
            }),
            result: runResultSchema,
          }),
        )
        .max(100),
      requested: z.number().int().min(0).max(100),
      skipped: z.number().int().min(0),
    })
    .optional(),
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
});

/** A script's path in a bundle: what a `script` input line can name. */
const scriptPath = z.string().min(1).max(500);

const bundleSchema = z.object({
  schema: z.literal('k6-distributed/report-bundle@1'),
  prNumber: z.number().int().positive(),
  headSha: z.string(),
  /** What the PR run's report step would have marked; never used: a fork's bundle chooses no comment. */
  marker: z.object({ workflow: z.string(), job: z.string(), key: z.string() }).optional(),
  input: inputSchema,
  /** Several scripts in one step (src/actions/report/scripts.ts): each script's data. */
  scripts: z
    .array(z.object({ script: scriptPath, input: inputSchema }))
    .min(1)
    .max(100)
    .optional(),
  /** Several scripts in one step: those without a result. */
  errors: z
    .array(z.object({ script: scriptPath, error: z.string().max(2000) }))
    .max(100)
    .optional(),
});

/**
 * Posts a fork PR's report bundle. The bundle was written by code the PR could change, so it is
 * data only: the PR number is checked against the triggering run, links are rebuilt from the
 * event, the comment's marker is made from the `workflow_run` event and this job (never from the
 * bundle), and the comment is rendered again here from the results (never the bundle's markdown).
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
  const wrLinks = { runUrl: wr.html_url ?? runUrl(ctx, wr.id), headSha: wr.head_sha };
  /** A report's data as this (trusted) workflow renders it: links rebuilt, policy and dashboard its own. */
  const trusted = (b: z.infer<typeof inputSchema>): CommentData => {
    const { run: baselineRun, ...baseline } = b.baseline;
    return {
      head: b.head,
      ...(b.base ? { base: b.base } : {}),
      baseline: {
        ...baseline,
        ...(baselineRun ? { run: { ...baselineRun, url: runUrl(ctx, baselineRun.id) } } : {}),
      },
      ...(b.history ? { history: b.history } : {}),
      options: {
        key: inputs.key,
        gate: parseGate(b.options.gate.join(',') || 'none'),
        tolerances: b.options.tolerances,
        // The policy of this (trusted) workflow, not of the bundle.
        scriptChange: inputs.scriptChange,
        ...(b.options.title ? { title: b.options.title } : {}),
        // This step's own input, never the bundle's: the link is not the fork's to choose.
        ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}),
      },
      links: wrLinks,
    };
  };
  // Which comment to update comes from the trusted side only: the triggering workflow's name as
  // GitHub reports it, this job, and this step's key; never from the bundle, which a fork wrote.
  const marker = commentMarker({ workflow: wr.name ?? 'workflow_run', job: ctx.job, key: inputs.key });
  let body: string;
  if (bundle.scripts) {
    // Several scripts: one comment with a section per script, rendered again from their data.
    const parts = bundle.scripts.map((p) => ({ script: p.script, input: trusted(p.input) }));
    const errors = bundle.errors ?? [];
    const rendered = renderScriptsReportBodies(
      parts,
      errors,
      marker,
      parts[0]!.input.options.title ?? defaultTitle(inputs.key),
    );
    await deps.writeSummary(rendered.summary.text);
    const judged = scriptsOutcome('post-bundle', { failOnRegression: false }, parts, rendered, errors);
    Object.assign(outcome.outputs, judged.outputs);
    outcome.annotations = judged.annotations;
    body = rendered.comment.text;
  } else {
    const input = trusted(bundle.input);
    const rendered = renderReportBodies(input, marker);
    await deps.writeSummary(rendered.summary.text);
    const judged = judgedOutcome('post-bundle', { failOnRegression: false }, input, rendered);
    Object.assign(outcome.outputs, judged.outputs);
    outcome.annotations = judged.annotations;
    body = rendered.comment.text;
  }
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
    body,
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
  checkJsonDepth(json, what);
  const parsed = bundleSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(`${what} is not a report bundle (${firstIssue(parsed.error)})`);
  }
  return parsed.data;
}
