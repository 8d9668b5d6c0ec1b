import type { Runner } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import { errorMessage, type Failure } from '../errors.ts';
import type { Logger } from '../log.ts';
import { LIFECYCLE_REQUEST_MARGIN_MS, lifecycleFailure } from './setup.ts';

/** Options of {@link teardownOnce}. */
export interface TeardownOptions {
  /** The user gave `--no-teardown` (or `noTeardown`, `K6_NO_TEARDOWN`): teardown() is not run. */
  skip: boolean;
  /** The script's `teardownTimeout` in s (k6's default 60). */
  timeoutS: number;
  /** Whether the script exports teardown() (as `SetupOptions.exported`): nothing is said when not. Default true. */
  exported?: boolean;
  /**
   * Ends runner `index`'s linger (monitor.ts `onTestEnded`): called at once for every lingering
   * runner but the one teardown() runs on (every one with `skip`).
   */
  endLinger?: (index: number) => void;
  clock: Clock;
  log: Logger;
}

/** What the teardown stage did. */
export interface TeardownInfo {
  /** The runner that ran teardown(); undefined when it did not run. */
  runner?: number;
  /** Why the run failed in teardown() (kind `runner`), with k6's message. */
  failure?: Failure;
  /** The code `k6 run` exits with after that failure: 107 (script exception) or 101 (teardownTimeout). */
  k6ExitCode?: number;
  /** How long it took, in ms: part of the test's duration, as in k6. */
  durationMs: number;
}

/**
 * The runner teardown() runs on ({@link teardownOnce}): the first one still lingering, runner 0
 * unless it is gone; undefined when none is.
 */
export function teardownRunner(
  runners: readonly Runner[],
  lingering: ReadonlySet<number>,
): Runner | undefined {
  return runners.find((r) => lingering.has(r.index));
}

/**
 * Teardown stage, once every runner's test has ended and before their linger ends: runs the
 * script's `teardown(data)` once (`POST /v1/teardown`) on the first runner still lingering, runner
 * 0 unless it is gone; every runner holds the setup data (setup.ts), so any of them passes it. Its
 * requests and metrics land in that runner's summary, written when its linger ends. As in k6, it
 * runs after an interruption or an abort too (k6 runs teardown() with its global context).
 * @param lingering indexes of the runners whose test ended and that still run (their REST API is up).
 * @returns a failure (never throws) when teardown() threw or passed `teardownTimeout`.
 */
export async function teardownOnce(
  runners: readonly Runner[],
  lingering: ReadonlySet<number>,
  options: TeardownOptions,
): Promise<TeardownInfo> {
  const runner = options.skip ? undefined : teardownRunner(runners, lingering);
  // The others' linger ends now: their ends (SIGTERM, the summary, the exit) overlap teardown().
  for (const i of lingering) if (i !== runner?.index) options.endLinger?.(i);
  if (options.skip) return { durationMs: 0 };
  const { clock, log } = options;
  if (!runner) {
    if (options.exported !== false) log.warning('teardown() was not run: no runner was left to run it');
    return { durationMs: 0 };
  }
  const began = clock.now();
  try {
    await runner.api.teardown(options.timeoutS * 1000 + LIFECYCLE_REQUEST_MARGIN_MS);
  } catch (error) {
    const durationMs = clock.now() - began;
    const known = lifecycleFailure(error, 'teardown');
    const message = known?.message ?? `teardown() could not run: ${errorMessage(error)}`;
    const failure: Failure = {
      kind: 'runner',
      runner: runner.index,
      message: `runner ${runner.index}: ${message}`,
    };
    return {
      runner: runner.index,
      failure,
      durationMs,
      ...(known ? { k6ExitCode: known.k6ExitCode } : {}),
    };
  }
  const durationMs = clock.now() - began;
  if (options.exported !== false)
    log.info(`teardown() ran once, on runner ${runner.index}, in ${Math.round(durationMs)} ms`);
  return { runner: runner.index, durationMs };
}
