import type { RunResult } from '../../result/schema.ts';

/**
 * The step's one-line failure for a run, or undefined when the run passed. Decided from the run's
 * failure kinds (src/errors.ts `FailureKind`): any kind fails the step; a result written before
 * kinds existed falls back to its `verdict`.
 */
export function runFailure(result: RunResult): string | undefined {
  const failed = result.failureKinds ? result.failureKinds.length > 0 : result.verdict === 'failed';
  return failed ? `k6 distributed run failed: ${result.failures.join('; ')}` : undefined;
}
