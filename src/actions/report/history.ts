import type { BaseHistory, HistoryRun } from '../../compare/baseline.ts';
import type { ArtifactTransfer } from '../../github/artifacts.ts';
import { type CandidateRun, findHistory } from '../../github/baseline.ts';
import type { GitRemote } from '../../github/git.ts';
import {
  type HistoryBranch,
  historyBranchProblem,
  readHistoryBranch,
  storeHistoryEntry,
} from '../../github/history-branch.ts';
import { entryAsResult, type HistoryEntry, historyEntry } from '../../result/history-entry.ts';
import type { RunResult } from '../../result/schema.ts';
import type { ActionContext } from './context.ts';
import type { ReportActionInputs } from './inputs.ts';
import { type PullRequestRef, pullRequestOf, type ReportDeps } from './outcome.ts';

/**
 * The report action's side of the history branch (`history-branch`, src/github/history-branch.ts):
 * mode `store` adds this run's entry; modes `comment` and `bundle` read the base branch's entries
 * for the trend and the between-run noise, beside the result artifacts or instead of them
 * (`history-branch-read`). The branch is reached with git over `<server>/<owner>/<repo>.git` and
 * the action's token. A pull request's run never writes to it: only a run on a branch (push,
 * schedule, workflow_dispatch) stores, so a fork's code never reaches it.
 */

/** The repository as git reaches it, with the action's token. */
export function historyRemote(ctx: ActionContext, token: string): GitRemote {
  return { url: `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}.git`, token };
}

/**
 * Adds this run to the history branch, when `history-branch` is set.
 * @returns one-line warnings: the store was refused (a pull request's run) or failed (the
 *   artifact is stored either way; the history is a help).
 */
export async function storeInHistoryBranch(
  inputs: Pick<ReportActionInputs, 'key' | 'historyBranch' | 'historyMaxRuns'>,
  deps: ReportDeps,
  head: RunResult,
): Promise<string[]> {
  const { ctx, log } = deps;
  if (!inputs.historyBranch) return [];
  const branch = /^refs\/heads\/(.+)$/.exec(ctx.ref)?.[1];
  if (pullRequestOf(ctx) || !branch)
    return [
      `history-branch: not written from ${ctx.eventName} on ${ctx.ref}: only a run on a branch (push, schedule, workflow_dispatch) adds to the history`,
    ];
  const entry = historyEntry(head, {
    key: inputs.key,
    branch,
    sha: ctx.sha,
    repository: `${ctx.owner}/${ctx.repo}`,
    workflowRunId: ctx.workflowRunId,
    runAttempt: ctx.runAttempt,
    storedAt: new Date().toISOString(),
  });
  const target: HistoryBranch = { remote: historyRemote(ctx, deps.token), branch: inputs.historyBranch };
  try {
    const stored = await storeHistoryEntry(target, entry, {
      maxRuns: inputs.historyMaxRuns,
      page: { serverUrl: ctx.serverUrl, repository: `${ctx.owner}/${ctx.repo}` },
      tempDir: deps.tempDir,
      log,
    });
    log(
      `history: ${stored.file} pushed to ${inputs.historyBranch} (${stored.commit.slice(0, 7)}, ${stored.kept} runs of ${inputs.key} kept, ${stored.pruned} oldest removed, ${stored.attempts} attempt${stored.attempts === 1 ? '' : 's'})`,
    );
    return [];
  } catch (error) {
    return [historyBranchProblem('write', inputs.historyBranch, error)];
  }
}

/** One history run of a branch entry: its workflow run, and a result of its key figures. */
function runOf(entry: HistoryEntry): HistoryRun {
  return {
    run: { id: entry.workflowRunId, sha: entry.sha, createdAt: entry.startedAt },
    result: entryAsResult(entry),
  };
}

/** The newest `count` runs of both sources, each run once (the artifact's result first), oldest first. */
function newestOf(
  runs: HistoryRun[],
  entries: HistoryEntry[],
  count: number,
): { runs: HistoryRun[]; added: number } {
  const ids = new Set(runs.map((r) => r.run.id));
  const fromBranch = entries.filter((e) => !ids.has(e.workflowRunId)).map(runOf);
  const all = [...runs, ...fromBranch].sort((a, b) => a.result.startedAt.localeCompare(b.result.startedAt));
  const kept = all.slice(Math.max(0, all.length - count));
  return { runs: kept, added: kept.filter((r) => fromBranch.includes(r)).length };
}

/** What {@link baseHistory} reads from. */
export interface HistorySources {
  gh: ReportDeps['gh'];
  transfer: ArtifactTransfer;
  query: Parameters<typeof findHistory>[2];
  newest: readonly CandidateRun[];
  /** The baseline run, already downloaded. */
  known: HistoryRun;
}

/**
 * The base branch's history for the trend and the between-run noise: the result artifacts of its newest
 * runs and, with `history-branch`, the branch's entries of the key for runs on the base branch:
 * `fallback` reads the branch only when the artifacts gave fewer than `history-runs` runs (some
 * expired, or never stored) and fills in runs they lack; `always` reads the branch alone (the
 * baseline artifact still decides the baseline). A branch that cannot be read is a log line.
 */
export async function baseHistory(
  inputs: Pick<ReportActionInputs, 'key' | 'historyRuns' | 'historyBranch' | 'historyBranchRead'>,
  deps: ReportDeps,
  pr: PullRequestRef,
  sources: HistorySources,
): Promise<BaseHistory> {
  const { log } = deps;
  const count = inputs.historyRuns;
  let artifacts = { runs: [] as HistoryRun[], skipped: 0, skippedIds: [] as number[] };
  if (!inputs.historyBranch || inputs.historyBranchRead === 'fallback') {
    const found = await findHistory(
      sources.gh,
      sources.transfer,
      sources.query,
      sources.newest,
      count,
      [{ runId: sources.known.run.id, result: sources.known.result }],
      log,
    );
    artifacts = {
      ...found,
      runs: found.runs.map(({ run, result }) => ({
        run: { id: run.id, sha: run.sha, createdAt: run.createdAt },
        result,
      })),
    };
    log(`history: ${found.runs.length} of ${count} runs read, ${found.skipped} skipped`);
  }
  const history: BaseHistory = { runs: artifacts.runs, requested: count, skipped: artifacts.skipped };
  if (!inputs.historyBranch || (inputs.historyBranchRead === 'fallback' && artifacts.runs.length >= count))
    return history;
  try {
    const dir = await deps.tempDir('k6d-history-branch-');
    const target = { remote: historyRemote(deps.ctx, deps.token), branch: inputs.historyBranch };
    const read = await readHistoryBranch(target, inputs.key, pr.baseRef, dir);
    const base = inputs.historyBranchRead === 'always' ? [sources.known] : artifacts.runs;
    const merged = newestOf(base, read.entries, count);
    const ids = new Set(read.entries.map((e) => e.workflowRunId));
    log(
      `history: ${read.exists ? `${read.entries.length} runs of ${inputs.key} on ${pr.baseRef} in ${inputs.historyBranch}${read.invalid > 0 ? ` (${read.invalid} unreadable files left out)` : ''}` : `no branch ${inputs.historyBranch} yet`}; ${merged.added} used`,
    );
    return {
      runs: merged.runs,
      requested: count,
      skipped: artifacts.skippedIds.filter((id) => !ids.has(id)).length,
      ...(merged.added > 0 ? { fromBranch: { branch: inputs.historyBranch, runs: merged.added } } : {}),
    };
  } catch (error) {
    log(historyBranchProblem('read', inputs.historyBranch, error));
    return inputs.historyBranchRead === 'always' ? { ...history, runs: [sources.known] } : history;
  }
}
