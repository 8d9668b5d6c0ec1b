/**
 * setup() and teardown() as k6 runs them: whether each runs and how long it may take, read from the
 * consolidated options. Pure.
 */

import { parseGoDuration } from './go-syntax.ts';

/** k6's default `setupTimeout` and `teardownTimeout`, in s (k6 `lib/options.go`). */
const DEFAULT_LIFECYCLE_TIMEOUT_S = 60;

/**
 * What the consolidated options (`k6 inspect`) say of setup() and teardown(): `noSetup`,
 * `noTeardown` (from the script, `--no-setup`/`--no-teardown` or `K6_NO_SETUP`/`K6_NO_TEARDOWN`, all
 * baked into the archive) and their timeouts in s.
 */
export function lifecycleOptions(options: Record<string, unknown>): {
  noSetup: boolean;
  noTeardown: boolean;
  setupTimeoutS: number;
  teardownTimeoutS: number;
} {
  const timeout = (value: unknown) => {
    if (typeof value === 'string') {
      try {
        return parseGoDuration(value);
      } catch {
        return DEFAULT_LIFECYCLE_TIMEOUT_S;
      }
    }
    return DEFAULT_LIFECYCLE_TIMEOUT_S;
  };
  return {
    noSetup: options.noSetup === true,
    noTeardown: options.noTeardown === true,
    setupTimeoutS: timeout(options.setupTimeout),
    teardownTimeoutS: timeout(options.teardownTimeout),
  };
}
