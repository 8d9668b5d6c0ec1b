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

function isSuitable(binary: string): boolean {
  try {
    return /^k6 v[12]\./.test(
      execFileSync(binary, ['version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    );
  } catch {
    return false;
  }
}

/**
 * Finds the k6 binary to run, in this order: `explicit` (the `--k6` flag), `$K6_BINARY`, `k6` on
 * PATH when it is v1.x or v2.x, then the pinned build of scripts/ensure-k6.sh.
 * @param name how the user named `explicit` (`--k6` on the CLI, `k6-binary` in an action), for errors.
 * @throws ConfigurationError when none is usable, saying how to get one.
 */
export function resolveK6Binary(
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
  name = 'k6 binary',
): string {
  const chosen = explicit || env.K6_BINARY;
  if (chosen) {
    if (!isSuitable(chosen))
      throw new ConfigurationError(
        `${explicit ? name : 'K6_BINARY'}: ${chosen} is not a runnable k6 v1.x or v2.x`,
      );
    return chosen;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'k6');
    if (dir && existsSync(candidate) && isSuitable(candidate)) return candidate;
  }
  const cached = cachedK6Path(env);
  if (existsSync(cached) && isSuitable(cached)) return cached;
  throw new ConfigurationError(
    'k6 binary: none found; install k6, set K6_BINARY, or run `bash scripts/ensure-k6.sh` to build the pinned version',
  );
}
