import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { rejudgeAb } from '../../compare/ab-result.ts';
import { DEFAULT_PAIRED_LEVEL } from '../../compare/paired.ts';
import type { CommentData } from '../../compare/verdict.ts';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import {
  BUNDLE_JSON_FILE,
  bundleArtifactName,
  downloadRunArtifact,
  findRunArtifact,
} from '../../github/artifacts.ts';
import { findPullRequest } from '../../github/pulls.ts';
import { firstIssue } from '../../inputs/parse.ts';
import { scriptKey } from '../../inputs/scripts.ts';
import { commentMarker, renderReportBodies } from '../../pr-comment/comment.ts';
import { renderScriptsReportBodies } from '../../pr-comment/scripts.ts';
import { defaultTitle } from '../../pr-comment/sections.ts';
import { abResultSchema } from '../../result/ab-schema.ts';
import { checkJsonDepth } from '../../result/read-result.ts';
import { type RunResult, runResultSchema } from '../../result/schema.ts';
import { abOutcome, renderAbBodies } from './ab.ts';
import { runUrl } from './context.ts';
import type { ReportActionInputs } from './inputs.ts';
import {
  emptyOutputs,
  judgedOutcome,
  type PullRequestRef,
  postComment,
  type ReportDeps,
  type ReportOutcome,
  scriptsOutcome,
} from './outcome.ts';
import { reportData } from './pull-request.ts';

// The `post-bundle` mode: post a fork pull request's report bundle from a `workflow_run` workflow.

/**
 * One report's data in a bundle: the fork's own measurement only. Whatever else the fork's run
 * wrote (`base`, `baseline`, `history`, `options`, `links`) is dropped unread: the baseline and the
 * history are read here from the base branch's artifacts, the policy comes from this step's inputs.
 */
const inputSchema = z.object({ head: runResultSchema });

/** The bundle artifact's size (zipped, as the REST API gives it) above which it is not downloaded. */
export const MAX_BUNDLE_ARTIFACT_BYTES = 5 * 1024 * 1024;
/** The unzipped report.json's size above which it is not parsed. */
export const MAX_BUNDLE_JSON_BYTES = 20 * 1024 * 1024;

/** A script's path in a bundle: what a `script` input line can name. */
const scriptPath = z.string().min(1).max(500);

const bundleSchema = z
  .object({
    schema: z.literal('k6-distributed/report-bundle@1'),
    prNumber: z.number().int().positive(),
    headSha: z.string(),
    /** What the PR run's report step would have marked; never used: a fork's bundle chooses no comment. */
    marker: z.object({ workflow: z.string(), job: z.string(), key: z.string() }).optional(),
    /** Absent when the bundle holds A/B rounds (`ab`). */
    input: inputSchema.optional(),
    /** A/B rounds: only the rounds (the fork's measurement) and the sides' names are used; the judgement is made here. */
    ab: abResultSchema.optional(),
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
  })
  .refine((b) => b.input || b.ab, { error: 'it has neither input nor ab' });

/**
 * Posts a fork PR's report bundle. The bundle was written by code the PR could change, so only the
 * fork's own measurement is taken from it (each head result and script path, checked): the PR
 * number is checked against the triggering run, main's baseline and history are read here with
 * this workflow's token (as mode `comment` does), the gate, tolerances, title, script-change policy
 * and dashboard link are this step's inputs, links are rebuilt from the event, the comment's marker
 * is made from the `workflow_run` event and this job, and the comment is rendered here (never the
 * bundle's markdown), saying which figures the fork's run reported. Too large a bundle is refused
 * before download, too large a report.json before parsing. This mode never fails the step on a
 * regression: the PR run's own check does.
 */
export async function postBundle(inputs: ReportActionInputs, deps: ReportDeps): Promise<ReportOutcome> {
  const { ctx, gh, log } = deps;
  const wr = ctx.payload.workflow_run as WorkflowRunEvent | undefined;
  if (!wr) throw new ConfigurationError(`mode: post-bundle needs a workflow_run event, not ${ctx.eventName}`);
  const outcome: ReportOutcome = { outputs: emptyOutputs('post-bundle'), annotations: [], warnings: [] };
  const run = { owner: ctx.owner, repo: ctx.repo, workflowRunId: wr.id };
  const name = bundleArtifactName(inputs.key);
  const what = `report bundle ${name} of run ${wr.id}`;
  const artifact = await findRunArtifact(gh, run, name);
  if (!artifact || artifact.expired) {
    outcome.warnings.push(
      `run ${wr.id} has ${artifact ? 'an expired' : 'no'} report bundle ${name}: nothing to post (did its report step run with mode bundle and key ${inputs.key}?)`,
    );
    return outcome;
  }
  if (artifact.sizeInBytes > MAX_BUNDLE_ARTIFACT_BYTES)
    throw new Error(
      `${what} is ${artifact.sizeInBytes} bytes, more than the ${MAX_BUNDLE_ARTIFACT_BYTES} a bundle may have: not downloaded, nothing posted`,
    );
  const dir = await deps.tempDir('k6d-bundle-');
  await downloadRunArtifact(deps.transfer, run, artifact.id, deps.token, dir);
  const bundle = await readBundle(path.join(dir, BUNDLE_JSON_FILE), what);

  const found = await findPullRequest(
    gh,
    {
      owner: ctx.owner,
      repo: ctx.repo,
      headSha: wr.head_sha,
      ...(wr.head_branch ? { headBranch: wr.head_branch } : {}),
      ...(wr.head_repository?.full_name ? { headRepository: wr.head_repository.full_name } : {}),
      eventPulls: wr.pull_requests ?? [],
    },
    bundle.prNumber,
    log,
  );
  if (!found) {
    outcome.warnings.push(
      `no open pull request has head ${wr.head_sha} (run ${wr.id}): nothing to comment on`,
    );
    return outcome;
  }
  log(`pull request #${found.number} (found by ${found.how}), base branch ${found.baseRef}`);
  const pr: PullRequestRef = {
    number: found.number,
    baseRef: found.baseRef,
    ...(found.baseSha ? { baseSha: found.baseSha } : {}),
    headSha: wr.head_sha,
    fromFork: true,
  };
  // The baseline's workflow: this step's input, else the triggering workflow (the one the PR ran,
  // as mode comment defaults to its own); never the bundle's.
  const own: ReportActionInputs = {
    ...inputs,
    baselineWorkflow: inputs.baselineWorkflow ?? workflowOf(wr),
  };
  const forkRunUrl = wr.html_url ?? runUrl(ctx, wr.id);
  /** A report's data as this (trusted) workflow makes it: the fork's head, the rest its own. */
  const trusted = (head: RunResult, key: string): Promise<CommentData> =>
    reportData(head, { ...own, key }, inputs, deps, pr, {
      runUrl: forkRunUrl,
      headSha: wr.head_sha,
      forkRunUrl,
    });

  // Which comment to update comes from the trusted side only: the triggering workflow's name as
  // GitHub reports it, this job, and this step's key; never from the bundle, which a fork wrote.
  const marker = commentMarker({ workflow: wr.name ?? 'workflow_run', job: ctx.job, key: inputs.key });
  let body: string;
  if (bundle.ab) {
    // A/B rounds: the fork's rounds, judged here with this step's gate and tolerances at the default level.
    const ab = rejudgeAb(bundle.ab, {
      level: DEFAULT_PAIRED_LEVEL,
      tolerances: inputs.tolerances,
      gate: inputs.gate,
    });
    const note = `Figures as reported by [the fork's run](${forkRunUrl}); judged here with this workflow's gate and tolerances.`;
    const rendered = renderAbBodies(ab, marker, inputs.title ?? defaultTitle(inputs.key), note);
    await deps.writeSummary(rendered.summary.text);
    Object.assign(outcome.outputs, abOutcome('post-bundle', { failOnRegression: false }, ab).outputs);
    body = rendered.comment.text;
  } else if (bundle.scripts) {
    // Several scripts: one comment with a section per script, each against its own key's baseline.
    const parts = [];
    for (const p of bundle.scripts) {
      log(`${p.script}: the baseline of key ${scriptKey(inputs.key, p.script)}`);
      parts.push({ script: p.script, input: await trusted(p.input.head, scriptKey(inputs.key, p.script)) });
    }
    const errors = bundle.errors ?? [];
    const rendered = renderScriptsReportBodies(
      parts,
      errors,
      marker,
      inputs.title ?? defaultTitle(inputs.key),
    );
    await deps.writeSummary(rendered.summary.text);
    const judged = scriptsOutcome('post-bundle', { failOnRegression: false }, parts, rendered, errors);
    Object.assign(outcome.outputs, judged.outputs);
    outcome.annotations = judged.annotations;
    body = rendered.comment.text;
  } else {
    const input = await trusted(bundle.input!.head, inputs.key);
    const rendered = renderReportBodies(input, marker);
    await deps.writeSummary(rendered.summary.text);
    const judged = judgedOutcome('post-bundle', { failOnRegression: false }, input, rendered);
    Object.assign(outcome.outputs, judged.outputs);
    outcome.annotations = judged.annotations;
    body = rendered.comment.text;
  }
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

/** What post-bundle reads of the `workflow_run` event (GitHub's, not the fork's). */
interface WorkflowRunEvent {
  id: number;
  name?: string;
  html_url?: string;
  head_sha: string;
  head_branch?: string | null;
  head_repository?: { full_name?: string } | null;
  workflow_id?: number;
  /** `.github/workflows/perf-pr.yml` */
  path?: string;
  pull_requests?: Array<{ number: number; base: { ref: string; sha?: string } }>;
}

/** The triggering run's workflow as a REST workflow_id: its file name, else its id. */
function workflowOf(wr: WorkflowRunEvent): string | undefined {
  const file = wr.path ? /^\.github\/workflows\/([^@/]+)/.exec(wr.path)?.[1] : undefined;
  return file ?? (wr.workflow_id === undefined ? undefined : String(wr.workflow_id));
}

/**
 * Reads and checks the bundle's report.json: its size before parsing, its depth, its schema.
 * @throws Error naming the bundle when it is too large, unreadable or not a report bundle.
 */
async function readBundle(file: string, what: string): Promise<z.infer<typeof bundleSchema>> {
  // A missing file is reported by the read below.
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size > MAX_BUNDLE_JSON_BYTES)
    throw new Error(
      `${what}: ${BUNDLE_JSON_FILE} is ${size} bytes unzipped, more than the ${MAX_BUNDLE_JSON_BYTES} a bundle may have: not parsed, nothing posted`,
    );
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
