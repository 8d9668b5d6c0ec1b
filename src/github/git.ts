import { execFile } from 'node:child_process';

/**
 * The `git` command line, for the history branch (src/github/history-branch.ts). It is on every
 * GitHub-hosted runner, and running it through `execFile` (no shell) was chosen over a JavaScript
 * git library: fetch, commit and push over HTTPS with a token are what git itself does best
 * (isomorphic-git would need its own HTTP transport, pack handling and shallow-clone support), and
 * the tests run the same commands against a real bare repository.
 *
 * The token never appears in a command line (where `ps` would show it) or in a URL (where git may
 * print it): it goes to git as an `Authorization` header through the `GIT_CONFIG_*` environment
 * variables (git ≥ 2.31), as actions/checkout does with `http.extraheader`.
 */

/** How git reaches the repository. */
export interface GitRemote {
  /** `https://github.com/owner/repo.git`, or a path or `file://` URL (tests). */
  url: string;
  /** A token with `contents: read` (read) or `contents: write` (store); none for a local remote. */
  token?: string;
}

/** A git command that failed: the subcommand and git's last line (never the token). */
export class GitError extends Error {
  override name = 'GitError';
  /** git's whole error output, to classify the failure ({@link isRaceLost}). */
  stderr = '';
}

/** A committer for the history branch: GitHub's Actions bot. */
const IDENTITY = [
  ['user.name', 'github-actions[bot]'],
  ['user.email', '41898282+github-actions[bot]@users.noreply.github.com'],
] as const;

/** The environment of every git call: no prompt, no pager, English messages, the token as a header. */
function gitEnv(remote: GitRemote): NodeJS.ProcessEnv {
  const config: Array<readonly [string, string]> = [...IDENTITY, ['advice.detachedHead', 'false']];
  if (remote.token) {
    const basic = Buffer.from(`x-access-token:${remote.token}`).toString('base64');
    config.push(['http.extraHeader', `AUTHORIZATION: basic ${basic}`]);
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    LC_ALL: 'C',
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/**
 * Runs `git <args>` in `cwd` and returns its stdout.
 * @throws GitError `git push: ! [rejected] … (fetch first)`: the subcommand and git's last line.
 */
export function git(remote: GitRemote, cwd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd, env: gitEnv(remote), maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const last =
          stderr
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean)
            .at(-1) ?? error.message.split('\n')[0];
        const text = remote.token ? String(last).split(remote.token).join('***') : String(last);
        reject(Object.assign(new GitError(`git ${args[0]}: ${text}`), { stderr }));
      },
    );
  });
}

/**
 * Whether a failed push lost a race with another writer (the branch moved, or was created, since
 * the fetch), so that fetching again and re-applying can succeed. Anything else (no permission, a
 * protected branch, no network) is not retried.
 */
export function isRaceLost(error: unknown): boolean {
  return (
    error instanceof GitError &&
    /non-fast-forward|fetch first|cannot lock ref|failed to update ref|incorrect old value|stale info/i.test(
      error.stderr,
    )
  );
}
