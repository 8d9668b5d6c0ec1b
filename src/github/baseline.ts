import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BaselineInfo } from '../compare/baseline.ts';
import { errorMessage } from '../errors.ts';
import { parseRunResult } from '../result/read-result.ts';
import type { RunEnvironment, RunResult } from '../result/schema.ts';
import {
  type ArtifactTransfer,
  BASELINE_METADATA_FILE,
  downloadRunArtifact,
  findRunArtifact,
  RESULT_FILE,
} from './artifacts.ts';
import { type GitHub, httpStatus } from './client.ts';

/**
 * Finding the baseline of a pull request: the result stored by the newest successful run of the
 * same workflow on the PR's base branch, preferring the run at the merge-base commit.
 *
 * REST (docs.github.com/en/rest): "Compare two commits" `GET /repos/{owner}/{repo}/compare/{base}...{head}`
 * (`merge_base_commit.sha`); "List workflow runs for a workflow"
 * `GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs?branch=&status=success&head_sha=`
 * (newest first; `workflow_id` may be the file name); "List workflow run artifacts" (with `expired`).
 */

/** What a baseline artifact carries besides the result: where and how the run ran. */
export interface BaselineMetadata extends RunEnvironment {
  schema: 'k6-distributed/baseline@1';
  /** The user key of the report (one baseline per key). */
  key: string;
  /** The commit the run tested. */
  sha: string;
  /** The ref the run ran on, e.g. `refs/heads/main`. */
  ref: string;
  repository: string;
  workflow: string;
  job: string;
  runId: number;
  runAttempt: number;
  /** ISO 8601 time the artifact was written. */
  createdAt: string;
}

/** Where to look. */
export interface BaselineQuery {
  owner: string;
  repo: string;
  /** The workflow's id or file name (`perf.yml`). */
  workflowId: number | string;
  /** The PR's base branch. */
  branch: string;
  /** The PR's base and head commits, to find the merge-base (optional). */
  baseSha?: string;
  headSha?: string;
  /** This run, never its own baseline. */
  currentRunId: number;
  artifactName: string;
  token: string;
  /** A fresh folder for the download. */
  dir: string;
  /** How many runs of the base branch to look at before giving up (default 10). */
  maxRuns?: number;
  /** How many runs {@link findHistory} will read: the listing of the newest runs is at least this long (default 0; at most 100). */
  historyRuns?: number;
}

/** The outcome: a result (state `found`) or the reason there is none. */
export interface BaselineLookup {
  info: BaselineInfo;
  result?: RunResult;
  metadata?: BaselineMetadata;
  /** The base branch's newest successful runs as listed (newest first), for {@link findHistory}. */
  newest: CandidateRun[];
}

/** A successful run of the base branch's workflow. */
export interface CandidateRun {
  id: number;
  sha: string;
  url: string;
  createdAt: string;
}

/**
 * Looks up the baseline. "No baseline yet" and "expired" are outcomes, not errors.
 * Order: runs at the merge-base first, then the newest successful runs; runs of fork branches
 * that happen to share the base branch's name are skipped. The search stops at the first stored
 * result, or at the first expired one among the newest runs (older ones have expired too).
 * @param log progress lines for the step log.
 * @throws when a REST call fails after retries (other than the merge-base lookup, which is
 *   optional), or when the artifact cannot be downloaded or is not a result.
 */
export async function findBaseline(
  gh: GitHub,
  transfer: ArtifactTransfer,
  q: BaselineQuery,
  log: (line: string) => void = () => {},
): Promise<BaselineLookup> {
  const maxRuns = q.maxRuns ?? 10;
  const mergeBase = await findMergeBase(gh, q, log);
  const base: BaselineInfo = {
    source: 'artifact',
    state: 'none',
    branch: q.branch,
    artifactName: q.artifactName,
    ...(mergeBase ? { mergeBase } : {}),
  };
  const atMergeBase = mergeBase ? await listRuns(gh, q, mergeBase) : [];
  const newest = await listRuns(gh, q);
  // Runs at the merge-base first, then the newest ones, each run once.
  const candidates = [
    ...atMergeBase.map((run) => ({ ...run, atMergeBase: true })),
    ...newest
      .filter((run) => !atMergeBase.some((m) => m.id === run.id))
      .map((run) => ({ ...run, atMergeBase: false })),
  ];

  let checked = 0;
  for (const run of candidates.slice(0, maxRuns)) {
    checked++;
    const ref = { owner: q.owner, repo: q.repo, workflowRunId: run.id };
    const artifact = await findRunArtifact(gh, ref, q.artifactName);
    if (!artifact) {
      log(`baseline: run ${run.id} (${run.sha.slice(0, 7)}) stored no ${q.artifactName}`);
      continue;
    }
    const runInfo = { id: run.id, url: run.url, sha: run.sha, createdAt: run.createdAt };
    if (artifact.expired) {
      log(`baseline: the ${q.artifactName} of run ${run.id} has expired`);
      if (run.atMergeBase) continue; // a newer run may still have one
      return {
        info: {
          ...base,
          state: 'expired',
          run: runInfo,
          runsChecked: checked,
          ...(artifact.expiresAt ? { expiredAt: artifact.expiresAt } : {}),
        },
        newest,
      };
    }
    log(`baseline: run ${run.id} at ${run.sha} (artifact ${artifact.id}, ${artifact.sizeInBytes} bytes)`);
    await downloadRunArtifact(transfer, ref, artifact.id, q.token, q.dir);
    const what = `baseline artifact ${q.artifactName} of run ${run.id}`;
    const result = parseRunResult(await readJson(path.join(q.dir, RESULT_FILE), what), what);
    const metadata = (await readJson(path.join(q.dir, BASELINE_METADATA_FILE), what).catch(
      () => undefined,
    )) as BaselineMetadata | undefined;
    return {
      info: { ...base, state: 'found', run: runInfo, atMergeBase: run.atMergeBase, runsChecked: checked },
      result,
      ...(metadata ? { metadata } : {}),
      newest,
    };
  }
  return { info: { ...base, runsChecked: checked }, newest };
}

/**
 * The results of the base branch's last `count` successful runs that stored one, oldest first:
 * the history of the trend and the noise gate. Runs come from `newest` (listed by
 * {@link findBaseline}, so no second listing); a run in `known` (the baseline, already
 * downloaded) is not downloaded again. A run whose artifact is missing, expired or unreadable is
 * skipped and counted (`skippedIds`: the history branch may have them), never an error: the history
 * is a help, the baseline decides alone without it.
 * Each download goes to its own folder under `q.dir`.
 */
export async function findHistory(
  gh: GitHub,
  transfer: ArtifactTransfer,
  q: Pick<BaselineQuery, 'owner' | 'repo' | 'artifactName' | 'token' | 'dir'>,
  newest: readonly CandidateRun[],
  count: number,
  known: ReadonlyArray<{ runId: number; result: RunResult }> = [],
  log: (line: string) => void = () => {},
): Promise<{ runs: Array<{ run: CandidateRun; result: RunResult }>; skipped: number; skippedIds: number[] }> {
  const runs: Array<{ run: CandidateRun; result: RunResult }> = [];
  const skippedIds: number[] = [];
  for (const run of newest) {
    if (runs.length >= count) break;
    const have = known.find((k) => k.runId === run.id);
    if (have) {
      runs.push({ run, result: have.result });
      continue;
    }
    try {
      const ref = { owner: q.owner, repo: q.repo, workflowRunId: run.id };
      const artifact = await findRunArtifact(gh, ref, q.artifactName);
      if (!artifact || artifact.expired) {
        skippedIds.push(run.id);
        log(
          `history: run ${run.id} (${run.sha.slice(0, 7)}) has ${artifact ? 'an expired' : 'no'} ${q.artifactName}`,
        );
        continue;
      }
      const dir = path.join(q.dir, `history-${run.id}`);
      await downloadRunArtifact(transfer, ref, artifact.id, q.token, dir);
      const what = `history artifact ${q.artifactName} of run ${run.id}`;
      runs.push({ run, result: parseRunResult(await readJson(path.join(dir, RESULT_FILE), what), what) });
    } catch (error) {
      skippedIds.push(run.id);
      log(`history: run ${run.id} skipped (${errorMessage(error)})`);
    }
  }
  return { runs: runs.reverse(), skipped: skippedIds.length, skippedIds };
}

async function readJson(file: string, what: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${what}: cannot read ${path.basename(file)} (${errorMessage(error)})`);
  }
}

/** The merge-base of the PR, or undefined when unknown (the lookup is best effort). */
async function findMergeBase(
  gh: GitHub,
  q: BaselineQuery,
  log: (line: string) => void,
): Promise<string | undefined> {
  if (!q.baseSha || !q.headSha) return undefined;
  try {
    const { data } = await gh.rest.repos.compareCommitsWithBasehead({
      owner: q.owner,
      repo: q.repo,
      basehead: `${q.baseSha}...${q.headSha}`,
      per_page: 1,
    });
    return data.merge_base_commit.sha;
  } catch (error) {
    log(
      `baseline: no merge-base (compare answered ${httpStatus(error) ?? errorMessage(error)}); using the newest run`,
    );
    return undefined;
  }
}

/** Successful runs of the workflow on the branch, newest first, pushed to this repository (not forks). */
async function listRuns(gh: GitHub, q: BaselineQuery, headSha?: string): Promise<CandidateRun[]> {
  const { data } = await gh.rest.actions.listWorkflowRuns({
    owner: q.owner,
    repo: q.repo,
    workflow_id: q.workflowId,
    branch: q.branch,
    status: 'success',
    exclude_pull_requests: true,
    // One page: 20 runs, more when the history asks for more (REST allows 100).
    per_page: headSha ? 10 : Math.min(100, Math.max(20, (q.historyRuns ?? 0) + 10)),
    ...(headSha ? { head_sha: headSha } : {}),
  });
  const fullName = `${q.owner}/${q.repo}`.toLowerCase();
  return data.workflow_runs
    .filter(
      (run) =>
        run.id !== q.currentRunId &&
        !run.event.startsWith('pull_request') &&
        (run.head_repository?.full_name ?? fullName).toLowerCase() === fullName,
    )
    .map((run) => ({ id: run.id, sha: run.head_sha, url: run.html_url, createdAt: run.created_at }));
}
