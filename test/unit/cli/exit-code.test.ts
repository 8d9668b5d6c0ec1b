import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/cli/program.ts';
import type { FailureKind } from '../../../src/errors.ts';
import type { RunResult } from '../../../src/result/result.ts';

/** A finished run's result, as far as the exit code reads it. */
function result(failureKinds: FailureKind[]): RunResult {
  return { failureKinds } as RunResult;
}

describe('the CLI exit code of a finished run', () => {
  it.each<[FailureKind[], boolean, number]>([
    [[], false, 0],
    [['thresholds'], false, 99],
    [['thresholds', 'runner'], false, 1],
    [['runner'], false, 1],
    [['deadline'], false, 1],
    [['incomplete'], false, 1],
    [['aborted'], false, 1],
    [['thresholds', 'interrupted'], false, 130],
    // Ctrl-C after the last runner ended: no failure was recorded, the user still interrupted.
    [[], true, 130],
  ])('failure kinds %j, interrupted %s: exit %i', (kinds, interrupted, code) => {
    expect(exitCodeOf(result(kinds), interrupted)).toBe(code);
  });
});
