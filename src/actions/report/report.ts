import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { METRIC_IDS, type MetricDelta, parseGate } from '../../compare/compare.ts';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import {
  type ArtifactTransfer,
  BASELINE_METADATA_FILE,
  BUNDLE_JSON_FILE,
  BUNDLE_MARKDOWN_FILE,
  baselineArtifactName,
  bundleArtifactName,
  downloadRunArtifact,
  findRunArtifact,
  RESULT_FILE,
  uploadFiles,
} from '../../github/artifacts.ts';
import type { BaselineMetadata } from '../../github/baseline.ts';
import { findBaseline } from '../../github/baseline.ts';
import { type GitHub, httpStatus } from '../../github/client.ts';
import { type StickyCommentTarget, upsertComment } from '../../github/comments.ts';
import { findPullRequest } from '../../github/pulls.ts';
import {
  type BaselineInfo,
  baselineInfoSchema,
  baselineRunSchema,
  type CommentData,
  commentMarker,
  defaultTitle,
  describeDelta,
  type MarkerKey,
  type RenderedReport,
  renderReportBodies,
} from '../../pr-comment/comment.ts';
import { inlineCode } from '../../render/format.ts';
import { renderReport } from '../../render/markdown.ts';
import { readRunResult } from '../../result/read-result.ts';
import { type RunResult, runResultSchema } from '../../result/result.ts';
import { type ActionContext, runUrl, workflowFileFromRef } from './context.ts';
import type { Mode, ReportActionInputs } from './inputs.ts';

/**
 * The logic of the `report` action, one function per mode. It takes its clients and context as
 * arguments and returns what the runner turns into outputs, annotations and the step's outcome;
 * the job summary is written through `deps.writeSummary` as soon as it exists, before any call
 * that may fail, so it is there on fork PRs and on errors.
 *
 * - `store`: upload this run's result and metadata as the baseline artifact (pushes to a branch);
 * - `comment`: compare with the baseline of the PR's base branch and upsert the sticky comment;
 * - `bundle`: the same comparison on a fork's PR (read-only token), written as an artifact;
 * - `post-bundle`: in a `workflow_run` workflow, download the bundle and post it on the PR.
 */

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
  /** Set when the step must fail (a gated regression with `fail-on-regression`). */
  failure?: string;
}

/** At most this many regression annotations (GitHub shows 10 per kind and step). */
export const MAX_ANNOTATIONS = 10;

/**
 * Picks the mode for `auto`: `pull_request`/`pull_request_target` -> `comment`, or `bundle` when
 * the PR comes from a fork; `workflow_run` -> `post-bundle`; anything else (push, schedule,
 * workflow_dispatch) -> `store`.
 */
export function resolveMode(mode: Mode, ctx: ActionContext): ResolvedMode {
  if (mode !== 'auto') return mode;
  if (ctx.eventName === 'workflow_run') return 'post-bundle';
  const pr = pullRequestOf(ctx);
  if (pr) return pr.fromFork && ctx.eventName === 'pull_request' ? 'bundle' : 'comment';
  return 'store';
}

/** Runs the action's logic for the inputs. */
export async function report(inputs: ReportActionInputs, deps: ReportDeps): Promise<ReportOutcome> {
  const mode = resolveMode(inputs.mode, deps.ctx);
  deps.log(`mode: ${mode}${inputs.mode === 'auto' ? ` (auto, event ${deps.ctx.eventName})` : ''}`);
  switch (mode) {
    case 'store':
      return store(inputs, deps);
    case 'comment':
    case 'bundle':
      return compareOnPullRequest(inputs, deps, mode);
    case 'post-bundle':
      return postBundle(inputs, deps);
  }
}

function emptyOutputs(mode: ResolvedMode): ReportOutputs {
  return {
    mode,
    verdict: '',
    'run-verdict': '',
    regressions: '[]',
    'baseline-sha': '',
    'baseline-run-id': '',
    'comment-url': '',
    'artifact-id': '',
  };
}

// ---------------------------------------------------------------- the pull request

interface PullRequestRef {
  number: number;
  baseRef: string;
  baseSha?: string;
  headSha: string;
  fromFork: boolean;
}

function pullRequestOf(ctx: ActionContext): PullRequestRef | undefined {
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

// ---------------------------------------------------------------- store

function branchOf(ref: string): string {
  return ref.replace(/^refs\/(heads|tags)\//, '');
}

async function store(inputs: ReportActionInputs, deps: ReportDeps): Promise<ReportOutcome> {
  const { ctx } = deps;
  const head = await readRunResult(inputs.resultPath, 'result');
  const name = baselineArtifactName(inputs.key);
  const metadata: BaselineMetadata = {
    schema: 'k6-distributed/baseline@1',
    ...head.environment,
    key: inputs.key,
    sha: ctx.sha,
    ref: ctx.ref,
    repository: `${ctx.owner}/${ctx.repo}`,
    workflow: ctx.workflow,
    job: ctx.job,
    runId: ctx.workflowRunId,
    runAttempt: ctx.runAttempt,
    createdAt: new Date().toISOString(),
  };
  const title = inputs.title ?? defaultTitle(inputs.key);
  const stored = `_This result is stored as the baseline for ${inlineCode(branchOf(ctx.ref))} (artifact \`${name}\`): pull requests into it are compared with it._`;
  await deps.writeSummary(`${renderReport(head, { title })}\n${stored}\n`);
  const dir = await deps.tempDir('k6d-baseline-');
  const uploaded = await uploadFiles(
    deps.transfer,
    name,
    {
      [RESULT_FILE]: `${JSON.stringify(head, null, 2)}\n`,
      [BASELINE_METADATA_FILE]: `${JSON.stringify(metadata, null, 2)}\n`,
    },
    dir,
    inputs.retentionDays,
  );
  deps.log(
    `stored ${name} (artifact ${uploaded.id ?? '?'}, ${uploaded.size ?? '?'} bytes) for ${ctx.ref} at ${ctx.sha}`,
  );
  return {
    outputs: {
      ...emptyOutputs('store'),
      verdict: 'stored',
      'run-verdict': head.verdict,
      'artifact-id': uploaded.id === undefined ? '' : String(uploaded.id),
    },
    annotations: [],
    warnings: [],
  };
}

// ---------------------------------------------------------------- comment and bundle

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

async function compareOnPullRequest(
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

/** Outputs, annotations and failure of a judged report. */
function judgedOutcome(
  mode: ResolvedMode,
  inputs: Pick<ReportActionInputs, 'failOnRegression'>,
  input: CommentData,
  rendered: RenderedReport,
): ReportOutcome {
  const { judgement } = rendered;
  const regressions = judgement.comparison?.regressions ?? [];
  const judged = judgement.verdict === 'passed' || judgement.verdict === 'regressed';
  const failing = judgement.verdict === 'regressed' && inputs.failOnRegression;
  const annotations: Annotation[] = regressions.slice(0, MAX_ANNOTATIONS).map((d) => ({
    // Errors only when the step fails; the worst come first, at most MAX_ANNOTATIONS.
    level: failing && d.gated ? 'error' : 'warning',
    title: `k6 regression: ${d.label}`,
    message: `${describeDelta(d)}, beyond the tolerance of ${d.tolerance.relativePct}% and ${d.tolerance.absolute}${d.unit === '/s' ? '/s' : d.unit === 'pp' ? ' pp' : 'ms'}${d.gated && judged ? '' : ' (not gated)'}`,
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
    warnings: [],
  };
  if (failing) {
    const against = input.baseline.branch ? ` against ${input.baseline.branch}` : '';
    outcome.failure = `performance regressed${against}: ${judgement.comparison!.gatedRegressions.map(describeDelta).join('; ')}`;
  }
  return outcome;
}

/**
 * One regression in the `regressions` output. `base`, `head` and `delta` are in the result's
 * units: ms for latency, requests per second for rps, a fraction (0-1) for rates.
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
  };
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

// ---------------------------------------------------------------- post-bundle

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
async function postBundle(inputs: ReportActionInputs, deps: ReportDeps): Promise<ReportOutcome> {
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

/**
 * Creates or updates the sticky comment and sets the `comment-url` output. A 403 (a read-only
 * token) becomes a warning that ends with `forbiddenHint`; any other error is thrown.
 */
async function postComment(
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

async function readBundle(file: string, what: string): Promise<z.infer<typeof bundleSchema>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${what}: cannot read ${BUNDLE_JSON_FILE} (${errorMessage(error)})`);
  }
  const parsed = bundleSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${what} is not a report bundle (${issue.path.join('.')}: ${issue.message})`);
  }
  return parsed.data;
}
