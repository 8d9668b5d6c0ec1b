import { ConfigurationError, errorMessage, RunError } from '../../errors.ts';
import type { FailureKind, RunResult } from '../../result/schema.ts';

/**
 * Why a step fails, as one line for `core.setFailed`, with the failure kinds it comes from
 * (src/errors.ts `FailureKind`: `thresholds`, `configuration`, `interrupted`, …) and, for a thrown
 * error that is not a user mistake, its stack for the debug log.
 */
export interface StepFailure {
  /** One line, shown as it is by `core.setFailed`. */
  message: string;
  /** The kinds it comes from; empty for an unexpected error (a bug or an outage). */
  kinds: FailureKind[];
  /** The stack of any error but a ConfigurationError (debug log only). */
  stack?: string;
}

/**
 * The step's one-line failure for a run, or undefined when the run passed. Decided from the run's
 * failure kinds (src/errors.ts `FailureKind`): any kind fails the step; a result written before
 * kinds existed falls back to its `verdict`.
 */
export function runFailure(result: RunResult): string | undefined {
  const failed = result.failureKinds ? result.failureKinds.length > 0 : result.verdict === 'failed';
  return failed ? `k6 distributed run failed: ${result.failures.join('; ')}` : undefined;
}

/**
 * The step's failure for a thrown error: a ConfigurationError with its own message (it names the
 * input); anything else as `prefix: message`, with its stack for the debug log.
 */
export function stepFailure(error: unknown, prefix: string): StepFailure {
  if (error instanceof ConfigurationError) return { message: error.message, kinds: ['configuration'] };
  return {
    message: `${prefix}: ${errorMessage(error)}`,
    kinds: error instanceof RunError ? [error.kind] : [],
    stack: error instanceof Error && error.stack ? error.stack : String(error),
  };
}
