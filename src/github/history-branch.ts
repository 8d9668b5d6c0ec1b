import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pRetry from 'p-retry';
import { errorMessage } from '../errors.ts';
import { renderTrendPage, type TrendPageOptions } from '../render/html/trend-page.ts';
import { entryFileName, type HistoryEntry, historyEntrySchema } from '../result/history-entry.ts';
import { type GitRemote, git, isRaceLost } from './git.ts';

/**
 * The history branch: results' key figures kept in a branch of the repository
 * (`history-branch`), where they outlive the result artifacts (which expire with the
 * repository's retention, 90 days at most).
 *
 * Layout (one file per run, so that two writers never touch the same file):
 * ```
 * index.html                                   the trend page (GitHub Pages), regenerated on each store
 * .nojekyll                                    Pages serves the files as they are
 * <key>/runs/<started>-<run id>-<attempt>.json one entry per run (src/result/history-entry.ts)
 * ```
 * Writing: a shallow fetch of the branch's tip into a fresh folder, the entry added, the oldest
 * entries of the key beyond `maxRuns` removed (file names sort by start time), the page
 * regenerated from every entry, one commit, a push. A push another writer beat (non-fast-forward)
 * is retried from a new fetch with back-off, so concurrent writers all land; the branch is
 * created (without history) by the first store. Reading: the same shallow fetch, and the key's
 * entries of the branch the runs tested.
 */

/** The branch and how to reach it. */
export interface HistoryBranch {
  remote: GitRemote;
  /** The branch, e.g. `perf-history`. */
  branch: string;
}

/** Options of {@link storeHistoryEntry}. */
export interface StoreOptions {
  /** Runs kept per key; the oldest beyond are removed from the tree. */
  maxRuns: number;
  /** Links of the trend page. */
  page: Omit<TrendPageOptions, 'historyBranch'>;
  /** A fresh empty folder per attempt. */
  tempDir: (prefix: string) => Promise<string>;
  log?: (line: string) => void;
  /** Pushes lost to another writer retried (default 6), first wait in ms (default 500, doubling, jittered). */
  retries?: number;
  minTimeoutMs?: number;
}

/** What a store did. */
export interface StoredEntry {
  /** The commit pushed. */
  commit: string;
  /** The entry's path in the branch. */
  file: string;
  /** Entries of the key removed to keep `maxRuns`. */
  pruned: number;
  /** Runs of the key in the branch now. */
  kept: number;
  attempts: number;
}

const RUNS = 'runs';
const ENTRY_FILE = /^[0-9T-]+Z-\d+-\d+\.json$/;

/**
 * Fetches the tip of the branch into `dir` (a new repository with a work tree). Returns false,
 * leaving an empty unborn branch there, when the remote has no such branch yet.
 * @throws GitError when the remote cannot be reached or read.
 */
async function checkOut(target: HistoryBranch, dir: string): Promise<boolean> {
  const ref = `refs/heads/${target.branch}`;
  await git(target.remote, dir, ['init', '-q']);
  await git(target.remote, dir, ['symbolic-ref', 'HEAD', ref]);
  const listed = await git(target.remote, dir, ['ls-remote', '--heads', target.remote.url, ref]);
  if (listed.trim() === '') return false;
  await git(target.remote, dir, ['fetch', '-q', '--depth=1', '--no-tags', target.remote.url, ref]);
  await git(target.remote, dir, ['reset', '-q', '--hard', 'FETCH_HEAD']);
  return true;
}

/** The entry files of a key in a checkout, oldest first (names sort by start time). */
async function entryFiles(dir: string, key: string): Promise<string[]> {
  const names = await readdir(path.join(dir, key, RUNS)).catch(() => [] as string[]);
  return names.filter((n) => ENTRY_FILE.test(n)).sort();
}

/** Every key folder of a checkout (names a key may have). */
async function keysOf(dir: string): Promise<string[]> {
  const names = await readdir(dir, { withFileTypes: true });
  return names
    .filter((d) => d.isDirectory() && /^[A-Za-z0-9._-]{1,64}$/.test(d.name) && d.name !== '.git')
    .map((d) => d.name);
}

/**
 * The entries of `keys` in a checkout, oldest first; a file that is not an entry (edited by hand,
 * another version) is counted in `invalid` and left out.
 */
async function readEntries(
  dir: string,
  keys: readonly string[],
): Promise<{ entries: HistoryEntry[]; invalid: number }> {
  const entries: HistoryEntry[] = [];
  let invalid = 0;
  for (const key of keys) {
    for (const name of await entryFiles(dir, key)) {
      try {
        const parsed = historyEntrySchema.safeParse(
          JSON.parse(await readFile(path.join(dir, key, RUNS, name), 'utf8')),
        );
        if (parsed.success && parsed.data.key === key) entries.push(parsed.data);
        else invalid++;
      } catch {
        invalid++;
      }
    }
  }
  entries.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return { entries, invalid };
}

/** One attempt: fetch, add, prune, regenerate the page, commit, push. */
async function storeOnce(
  target: HistoryBranch,
  entry: HistoryEntry,
  options: StoreOptions,
): Promise<Omit<StoredEntry, 'attempts'>> {
  const dir = await options.tempDir('k6d-history-branch-');
  try {
    await checkOut(target, dir);
    const runsDir = path.join(dir, entry.key, RUNS);
    await mkdir(runsDir, { recursive: true });
    const name = entryFileName(entry);
    await writeFile(path.join(runsDir, name), `${JSON.stringify(entry, null, 2)}\n`);
    const files = await entryFiles(dir, entry.key);
    const excess = files.slice(0, Math.max(0, files.length - options.maxRuns));
    for (const old of excess) await rm(path.join(runsDir, old));
    const { entries } = await readEntries(dir, await keysOf(dir));
    await writeFile(
      path.join(dir, 'index.html'),
      renderTrendPage(entries, { ...options.page, historyBranch: target.branch }),
    );
    await writeFile(path.join(dir, '.nojekyll'), '');
    await git(target.remote, dir, ['add', '-A']);
    const kept = files.length - excess.length;
    await git(target.remote, dir, [
      'commit',
      '-q',
      '-m',
      `k6-distributed: ${entry.key} run ${entry.workflowRunId} at ${entry.sha.slice(0, 7)} (${kept} runs kept${excess.length > 0 ? `, ${excess.length} oldest removed` : ''})`,
    ]);
    await git(target.remote, dir, ['push', '-q', target.remote.url, `HEAD:refs/heads/${target.branch}`]);
    const commit = (await git(target.remote, dir, ['rev-parse', 'HEAD'])).trim();
    return { commit, file: `${entry.key}/${RUNS}/${name}`, pruned: excess.length, kept };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Adds one run to the history branch (creating the branch on the first store) and regenerates
 * its trend page. A push that another writer beat is retried from a new fetch, up to
 * `options.retries` times with exponential back-off and jitter, so concurrent stores all land.
 * @throws GitError naming the git command and git's message (no permission: `contents: write` is
 *   needed; a protected branch), or the last lost race when the retries ran out.
 */
export async function storeHistoryEntry(
  target: HistoryBranch,
  entry: HistoryEntry,
  options: StoreOptions,
): Promise<StoredEntry> {
  let attempts = 0;
  const stored = await pRetry(
    async () => {
      attempts++;
      return storeOnce(target, entry, options);
    },
    {
      retries: options.retries ?? 6,
      minTimeout: options.minTimeoutMs ?? 500,
      maxTimeout: 8000,
      factor: 2,
      randomize: true,
      shouldRetry: ({ error }) => isRaceLost(error),
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (isRaceLost(error) && retriesLeft > 0)
          options.log?.(
            `history: the push of attempt ${attemptNumber} lost to another writer; fetching again`,
          );
      },
    },
  );
  return { ...stored, attempts };
}

/** What {@link readHistoryBranch} found. */
export interface BranchHistory {
  /** The key's entries of runs on `branch`, oldest first. */
  entries: HistoryEntry[];
  /** Files of the key that are not entries. */
  invalid: number;
  /** False when the history branch does not exist (yet). */
  exists: boolean;
}

/**
 * The entries of `key` for runs that tested `testedBranch` (the PR's base branch), from a shallow
 * fetch of the history branch into `dir`.
 * @throws GitError when the remote cannot be reached or read.
 */
export async function readHistoryBranch(
  target: HistoryBranch,
  key: string,
  testedBranch: string,
  dir: string,
): Promise<BranchHistory> {
  if (!(await checkOut(target, dir))) return { entries: [], invalid: 0, exists: false };
  const { entries, invalid } = await readEntries(dir, [key]);
  return { entries: entries.filter((e) => e.branch === testedBranch), invalid, exists: true };
}

/** A one-line reason a history branch could not be read or written, for a warning. */
export function historyBranchProblem(what: 'read' | 'write', branch: string, error: unknown): string {
  const hint = what === 'write' ? ' (the token needs contents: write)' : '';
  return `history-branch: could not ${what} ${branch}${hint}: ${errorMessage(error)}`;
}
