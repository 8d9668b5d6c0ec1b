import type { FailureKind } from './result/schema.ts';

/**
 * Why a run failed, as kinds rather than strings. The CLI's exit code, the actions' outputs and
 * `core.setFailed` are decided from kinds ({@link exitCodeFor}), never by reading messages.
 */

/**
 * The kinds of failure, in order of precedence for the exit code:
 * - `interrupted`: Ctrl-C, SIGTERM or a cancelled workflow (CLI exit 130);
 * - `configuration`: a mistake in what the user gave: an input, a flag, the script, its options,
 *   the cluster's permissions (exit 2); shown as one line naming the input;
 * - `start`: the runners could not be launched or did not become ready (exit 1);
 * - `runner`: a runner failed during the test: crash, OOMKilled, evicted, script exception (exit 1);
 * - `deadline`: still running after the test's totalDuration plus the grace (exit 1);
 * - `incomplete`: a runner left no readable summary, so the aggregate misses its share (exit 1);
 * - `aborted`: the test was aborted (a threshold with abortOnFail, `test.abort()`) (exit 1 unless
 *   a finer k6 code is known to the caller);
 * - `marked-failed`: the script called `exec.test.fail()`: the test ran to its end and failed
 *   (exit 1, or k6's 110 where the caller knows the runners' codes, as `k6 run` exits);
 * - `thresholds`: thresholds crossed on the aggregate (exit 99, as `k6 run`).
 */
export type { FailureKind };

/** One reason a run failed: its kind, one line for the user, and the runner it concerns if any. */
export interface Failure {
  kind: FailureKind;
  /** One line, shown as it is (CLI stderr, `core.setFailed`, the report). */
  message: string;
  /** Index of the runner the failure concerns (0-based), when it concerns one. */
  runner?: number;
  /** Indexes of the runners it concerns, when several (the runners still testing at the deadline). */
  runners?: number[];
}

/**
 * A failure thrown before a result exists (bad input, runners that could not start, an
 * interruption before the start). Anything else thrown is a bug or an outage and is shown with
 * its stack in debug logs.
 */
export class RunError extends Error {
  override name = 'RunError';
  /** What kind of failure this is; decides the exit code ({@link exitCodeFor}). */
  readonly kind: FailureKind;
  constructor(kind: FailureKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/**
 * A mistake in what the user gave (an input, a flag, the script, the cluster's permissions): the
 * message is one line that names the input or flag as the user wrote it.
 * (The split follows github/codeql-action's ConfigurationError.)
 *
 * `k6ExitCode` is set when k6 itself refused the script or its options before any load
 * (`k6 archive`/`k6 inspect` exited 104, invalid options, or 107, a script exception such as a
 * syntax error): the CLI then exits with k6's code, as a plain `k6 run` of the script would,
 * instead of its own 2 (k6 `errext/exitcodes`).
 */
export class ConfigurationError extends RunError {
  override name = 'ConfigurationError';
  /** k6's own exit code (104 or 107) when k6 refused; undefined for our own checks. */
  readonly k6ExitCode: number | undefined;
  constructor(message: string, options: { k6ExitCode?: number } = {}) {
    super('configuration', message);
    this.k6ExitCode = options.k6ExitCode;
  }
}

/** The failure of a run interrupted before any runner started (Ctrl-C, SIGTERM, a cancelled workflow). */
export function interruptedBeforeStart(): RunError {
  return new RunError('interrupted', 'interrupted before the start: no runner had started');
}

/** Returns the message of any thrown value. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The CLI's exit codes (documented in the README). */
export const EXIT_CODE = {
  passed: 0,
  failed: 1,
  configuration: 2,
  thresholds: 99,
  interrupted: 130,
} as const;

/**
 * The CLI exit code for a set of failure kinds: 0 when there is none; 130 when interrupted; 2 for
 * a configuration error; 99 when thresholds crossed on the aggregate are the only reason (as
 * `k6 run` exits 99); 1 otherwise.
 */
export function exitCodeFor(kinds: readonly FailureKind[]): number {
  if (kinds.length === 0) return EXIT_CODE.passed;
  if (kinds.includes('interrupted')) return EXIT_CODE.interrupted;
  if (kinds.includes('configuration')) return EXIT_CODE.configuration;
  if (kinds.every((k) => k === 'thresholds')) return EXIT_CODE.thresholds;
  return EXIT_CODE.failed;
}
