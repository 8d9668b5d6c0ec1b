import type { Runner } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import { errorMessage, type Failure, interruptedBeforeStart, RunError } from '../errors.ts';
import { K6_EXIT } from '../k6/exit-codes.ts';
import { RunnerHttpError } from '../k6/rest.ts';
import type { Logger } from '../log.ts';

/**
 * The time a setup or teardown request may take beyond k6's own `setupTimeout`/`teardownTimeout`,
 * in ms: k6 answers by then (HTTP 500, "timed out"), so our request never cuts it short (the
 * function runs inside the request's context: cancelling the request would cancel it).
 */
export const LIFECYCLE_REQUEST_MARGIN_MS = 30_000;

/** Options of {@link setupOnce}. */
export interface SetupOptions {
  /** The user gave `--no-setup` (or `noSetup`, `K6_NO_SETUP`): setup() is not run at all. */
  skip: boolean;
  /** The script's `setupTimeout` in s (k6's default 60). */
  timeoutS: number;
  /**
   * Whether the script exports setup() (the preflight's reading of its sources). When it does not,
   * runner 0 is asked all the same (k6 skips a missing setup() and gives no data) but the stage
   * says nothing. Default true.
   */
  exported?: boolean;
  signal?: AbortSignal;
  clock: Clock;
  log: Logger;
}

/** What the setup stage did. */
export interface SetupInfo {
  /** Whether setup() was run (on runner 0). */
  ran: boolean;
  /** What setup() returned (`{data}`); undefined when it returned nothing or did not run. */
  data?: { data: unknown };
  /** How long it took, in ms (0 when it did not run): part of the test's duration, as in k6. */
  durationMs: number;
  /**
   * setup() failed inside k6 (kind `runner`, runner 0): k6's message, as `k6 run` reports it. The
   * test must not start; `k6 run` still writes its summary, and so does the run (a partial result).
   */
  failure?: Failure;
  /** The code `k6 run` exits with after that failure: 107 (script exception) or 100 (setupTimeout). */
  k6ExitCode?: number;
}

/**
 * A setup() or teardown() that failed inside k6, as `k6 run` reports it: k6's message on one line
 * and its exit code (107 script exception; 100/101 when it passed its timeout), or undefined when
 * the request failed for another reason (the runner could not be reached).
 */
export function lifecycleFailure(
  error: unknown,
  fn: 'setup' | 'teardown',
): { message: string; k6ExitCode: number } | undefined {
  if (!(error instanceof RunnerHttpError) || error.status !== 500) return undefined;
  const detail = error.detail.replace(/\s+/g, ' ').trim();
  const timedOut = /execution timed out after/.test(detail);
  const k6ExitCode = timedOut
    ? fn === 'setup'
      ? K6_EXIT.setupTimeout
      : K6_EXIT.teardownTimeout
    : K6_EXIT.scriptException;
  const what = timedOut ? `${fn}() timed out` : 'script exception';
  return { message: `${fn}() failed (exit ${k6ExitCode}: ${what}): ${detail.slice(0, 500)}`, k6ExitCode };
}

/**
 * Setup stage, after the barrier and before the start: runs the script's `setup()` once, on runner
 * 0 (`POST /v1/setup`, so its requests and metrics are counted once, in runner 0's summary), then
 * gives its data to every other runner (`PUT /v1/setup`), so that every VU of every runner receives
 * the same data, as in one `k6 run`. Runners run with `--no-setup`, so none runs it itself.
 * @returns a `failure` (never throws for it) when setup() threw (k6's message, exit 107) or passed
 *   `setupTimeout` (exit 100): as `k6 run`, the test does not start, and its summary is written.
 * @throws RunError `start` when a runner could not be reached; RunError `interrupted` when
 *   `signal` aborts first.
 */
export async function setupOnce(runners: readonly Runner[], options: SetupOptions): Promise<SetupInfo> {
  if (options.skip || runners.length === 0) return { ran: false, durationMs: 0 };
  const { clock, log } = options;
  // Interrupted while the barrier waited: setup() never starts (its request would outlive the cleanup).
  if (options.signal?.aborted) throw interruptedBeforeStart();
  const began = clock.now();
  let data: { data: unknown } | undefined;
  try {
    data = await interruptible(
      runners[0]!.api.setup(options.timeoutS * 1000 + LIFECYCLE_REQUEST_MARGIN_MS),
      options.signal,
    );
  } catch (error) {
    if (error instanceof RunError) throw error;
    const known = lifecycleFailure(error, 'setup');
    if (known) {
      return {
        ran: true,
        durationMs: clock.now() - began,
        failure: { kind: 'runner', runner: 0, message: `runner 0: ${known.message}` },
        k6ExitCode: known.k6ExitCode,
      };
    }
    throw new RunError('start', `setup() could not run on runner 0: ${errorMessage(error)}`);
  }
  if (data !== undefined) {
    const setData = data.data;
    await Promise.all(
      runners.slice(1).map((r) =>
        r.api.setSetupData(setData).catch((error: unknown) => {
          throw new RunError(
            'start',
            `runner ${r.index} did not take the setup data: ${errorMessage(error)}`,
          );
        }),
      ),
    );
  }
  const durationMs = clock.now() - began;
  if (options.exported !== false)
    log.info(`setup() ran once, on runner 0, in ${Math.round(durationMs)} ms; its data went to every runner`);
  return { ran: true, durationMs, ...(data === undefined ? {} : { data }) };
}

/**
 * `work`, or RunError `interrupted` as soon as `signal` aborts. A `work` left behind by the
 * interruption may still fail (the cleanup ends its runner): that failure is the interruption's.
 */
function interruptible<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(interruptedBeforeStart());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
