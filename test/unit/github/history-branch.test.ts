import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GitError, isRaceLost } from '../../../src/github/git.ts';
import {
  type HistoryBranch,
  readHistoryBranch,
  type StoreOptions,
  storeHistoryEntry,
} from '../../../src/github/history-branch.ts';
import { type HistoryEntry, historyEntry } from '../../../src/result/history-entry.ts';
import { makeResult } from '../../support/results.ts';
import { tempDir } from '../../support/temp.ts';

// The history branch against a real git repository: a bare repository in a temp folder is the
// remote, written and read with the git command line as on a runner.

/** A new bare repository as the remote, and the branch in it. */
function remote(): HistoryBranch {
  const dir = path.join(tempDir('k6d-remote-'), 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', dir]);
  return { remote: { url: dir }, branch: 'perf-history' };
}

/** The files of the branch's tip, and how many commits it has. */
function tip(target: HistoryBranch): { files: string[]; commits: number; show: (file: string) => string } {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', target.remote.url, ...args], { encoding: 'utf8' });
  return {
    files: git('ls-tree', '-r', '--name-only', target.branch).trim().split('\n').filter(Boolean),
    commits: Number(git('rev-list', '--count', target.branch).trim()),
    show: (file) => git('show', `${target.branch}:${file}`),
  };
}

/** The entry of workflow run `id`, started `id` minutes after 08:00, with p95 `p95`. */
function entry(id: number, p95 = 22, key = 'api', branch = 'main'): HistoryEntry {
  const startedAt = new Date(Date.UTC(2026, 0, 10, 8, id)).toISOString();
  return historyEntry(makeResult({ p95 }, { startedAt, runId: `run-${id}` }), {
    key,
    branch,
    sha: String(id).padStart(7, '0').repeat(6).slice(0, 40),
    repository: 'octo/app',
    workflowRunId: id,
    runAttempt: 1,
    storedAt: startedAt,
  });
}

function options(extra: Partial<StoreOptions> = {}): StoreOptions {
  return {
    maxRuns: 500,
    page: { serverUrl: 'https://github.com', repository: 'octo/app' },
    tempDir: async (prefix) => tempDir(prefix),
    minTimeoutMs: 10,
    ...extra,
  };
}

describe('the history branch in a real repository', () => {
  it('creates the branch on the first store, adds one file per run, and regenerates the trend page', async () => {
    const target = remote();
    for (const id of [11, 12, 13]) {
      const stored = await storeHistoryEntry(target, entry(id, 20 + id), options());
      expect(stored).toMatchObject({ pruned: 0, kept: id - 10, attempts: 1 });
    }
    const { files, commits, show } = tip(target);
    expect(commits).toBe(3);
    expect(files).toEqual([
      '.nojekyll',
      'api/runs/2026-01-10T08-11-00Z-11-1.json',
      'api/runs/2026-01-10T08-12-00Z-12-1.json',
      'api/runs/2026-01-10T08-13-00Z-13-1.json',
      'index.html',
    ]);
    const stored = JSON.parse(show('api/runs/2026-01-10T08-12-00Z-12-1.json'));
    expect(stored).toEqual(entry(12, 32));
    // The page holds every run, newest first in its table.
    const page = show('index.html');
    expect([...page.matchAll(/<tr data-run="(\d+)">/g)].map((m) => m[1])).toEqual(['13', '12', '11']);
    expect(page).toContain('33.00ms');
  });

  it('reads the key’s runs of the tested branch, oldest first; no branch yet is an empty history', async () => {
    const target = remote();
    expect(await readHistoryBranch(target, 'api', 'main', tempDir())).toEqual({
      entries: [],
      invalid: 0,
      exists: false,
    });
    await storeHistoryEntry(target, entry(22), options());
    await storeHistoryEntry(target, entry(21), options());
    await storeHistoryEntry(target, entry(23, 22, 'api', 'release'), options());
    await storeHistoryEntry(target, entry(24, 22, 'web'), options());
    const read = await readHistoryBranch(target, 'api', 'main', tempDir());
    expect(read.exists).toBe(true);
    expect(read.entries.map((e) => e.workflowRunId)).toEqual([21, 22]);
    // The page has every key and branch.
    const page = tip(target).show('index.html');
    expect(page).toContain('data-series="3"');
  });

  it('keeps at most maxRuns runs per key, removing the oldest', async () => {
    const target = remote();
    await storeHistoryEntry(target, entry(50, 22, 'web'), options({ maxRuns: 2 }));
    const results = [];
    for (const id of [31, 32, 33, 34, 35])
      results.push(await storeHistoryEntry(target, entry(id), options({ maxRuns: 3 })));
    expect(results.map((r) => [r.kept, r.pruned])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [3, 1],
      [3, 1],
    ]);
    const runs = tip(target).files.filter((f) => f.startsWith('api/runs/'));
    expect(runs.map((f) => f.split('-').at(-2))).toEqual(['33', '34', '35']);
    // Another key is not pruned by this one's limit.
    expect(tip(target).files.filter((f) => f.startsWith('web/runs/'))).toHaveLength(1);
    expect((await readHistoryBranch(target, 'api', 'main', tempDir())).entries).toHaveLength(3);
  });

  it('lands every one of several concurrent stores: a push that lost the race fetches again and re-applies', async () => {
    const target = remote();
    await storeHistoryEntry(target, entry(40), options());
    const ids = [41, 42, 43, 44];
    const stored = await Promise.all(ids.map((id) => storeHistoryEntry(target, entry(id), options())));
    const { files, commits } = tip(target);
    for (const id of ids) expect(files).toContain(`api/runs/2026-01-10T08-${id}-00Z-${id}-1.json`);
    expect(commits).toBe(5);
    // Races did happen (all four fetched the same tip): only the retries made them land.
    expect(stored.reduce((n, s) => n + s.attempts, 0)).toBeGreaterThan(ids.length);
    const page = tip(target).show('index.html');
    for (const id of [40, ...ids]) expect(page).toContain(`<tr data-run="${id}">`);
  });

  it('without retries, concurrent stores lose runs: the test above can fail', async () => {
    const target = remote();
    await storeHistoryEntry(target, entry(40), options());
    const settled = await Promise.allSettled(
      [41, 42, 43, 44].map((id) => storeHistoryEntry(target, entry(id), options({ retries: 0 }))),
    );
    const lost = settled.filter((s) => s.status === 'rejected');
    expect(lost.length).toBeGreaterThan(0);
    for (const l of lost) expect(isRaceLost((l as PromiseRejectedResult).reason)).toBe(true);
  });

  it('does not retry a push the remote refuses for another reason, and says why in one line', async () => {
    const target = remote();
    const hook = path.join(target.remote.url, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "protected branch" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const error = await storeHistoryEntry(target, entry(60), options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(isRaceLost(error)).toBe(false);
    expect((error as Error).message).toMatch(/^git push: [^\n]+$/);
  });
});
