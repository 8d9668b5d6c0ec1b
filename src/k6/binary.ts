import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigurationError } from '../errors.ts';

/** The k6 version this project pins and builds (tools/k6/go.mod; a test keeps the two equal). */
export const PINNED_K6_VERSION = 'v2.2.0';

/** Where scripts/ensure-k6.sh puts the pinned build: `$K6D_CACHE_DIR` or `~/.cache/k6-distributed`. */
export function cachedK6Path(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.K6D_CACHE_DIR || path.join(os.homedir(), '.cache', 'k6-distributed');
  return path.join(cache, `k6-${PINNED_K6_VERSION}`, 'k6');
}

/**
 * How long one k6 command of the preflight (`k6 version`, `k6 archive`, `k6 inspect`) may take, in
 * s, before it is killed: a k6 (or a wrapper) that hangs would otherwise hang the run forever.
 * `k6 archive` and `k6 inspect` run the script's init code once, which takes far less.
 */
export const K6_COMMAND_TIMEOUT_S = 60;

/** The environment variable that overrides {@link K6_COMMAND_TIMEOUT_S} (seconds; tests set it low). */
export const K6_COMMAND_TIMEOUT_ENV = 'K6D_K6_COMMAND_TIMEOUT_S';

/** {@link K6_COMMAND_TIMEOUT_S}, or `$K6D_K6_COMMAND_TIMEOUT_S` when it is a number above 0, in s. */
export function k6CommandTimeoutS(env: NodeJS.ProcessEnv = process.env): number {
  const given = Number(env[K6_COMMAND_TIMEOUT_ENV]);
  return given > 0 ? given : K6_COMMAND_TIMEOUT_S;
}

/** The one line for a k6 command that did not finish in time, naming the binary and the command. */
export function k6TimedOut(binary: string, command: string, env: NodeJS.ProcessEnv = process.env): string {
  return `k6 binary: ${binary} did not finish \`${command}\` within ${k6CommandTimeoutS(env)} s (is it k6, or does it wait for something?)`;
}

/**
 * Whether `binary version` names k6 v1.x or v2.x.
 * @throws ConfigurationError when it does not finish within {@link k6CommandTimeoutS}.
 */
function isSuitable(binary: string, env: NodeJS.ProcessEnv): boolean {
  try {
    return /^k6 v[12]\./.test(
      execFileSync(binary, ['version'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: k6CommandTimeoutS(env) * 1000,
        killSignal: 'SIGKILL',
      }),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ETIMEDOUT')
      throw new ConfigurationError(k6TimedOut(binary, 'k6 version', env));
    return false;
  }
}

/**
 * Finds the k6 binary to run, in this order: `explicit` (the `--k6` flag), `$K6_BINARY`, `k6` on
 * PATH when it is v1.x or v2.x, then the pinned build of scripts/ensure-k6.sh.
 * @param name how the user named `explicit` (`--k6` on the CLI, `k6-binary` in an action), for errors.
 * @throws ConfigurationError when none is usable, saying how to get one, or when one's `k6 version`
 *   hangs (it is killed after {@link k6CommandTimeoutS}).
 */
export function resolveK6Binary(
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
  name = 'k6 binary',
): string {
  const chosen = explicit || env.K6_BINARY;
  if (chosen) {
    if (!isSuitable(chosen, env))
      throw new ConfigurationError(
        `${explicit ? name : 'K6_BINARY'}: ${chosen} is not a runnable k6 v1.x or v2.x`,
      );
    return chosen;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'k6');
    if (dir && existsSync(candidate) && isSuitable(candidate, env)) return candidate;
  }
  const cached = cachedK6Path(env);
  if (existsSync(cached) && isSuitable(cached, env)) return cached;
  throw new ConfigurationError(
    'k6 binary: none found; install k6, set K6_BINARY, or run `bash scripts/ensure-k6.sh` to build the pinned version',
  );
}
