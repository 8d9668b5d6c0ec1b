import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/cli/program.ts';
import type { FailureKind } from '../../../src/errors.ts';
import type { RunResult } from '../../../src/result/schema.ts';

/** A finished run's result, as far as the exit code reads it. */
function result(failureKinds: FailureKind[], exitCodes: number[] = [0, 0]): RunResult {
  return { failureKinds, runners: exitCodes.map((exitCode) => ({ exitCode })) } as RunResult;
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

describe("k6's own exit code when a runner's exit gives it", () => {
  it.each<[FailureKind[], number[], number]>([
    // test.abort() in one runner: a plain k6 run exits 108; the others were stopped (103).
    [['aborted'], [108, 103], 108],
    // A script exception mid-test: 107, as k6.
    [['runner'], [0, 107], 107],
    // exec.test.fail() wins over crossed thresholds in k6's cmd/run.go: 110.
    [['runner', 'thresholds'], [110, 0], 110],
    // Thresholds alone keep 99 even when a runner's slice also exited 99.
    [['thresholds'], [99, 0], 99],
    // An interruption is 130 whatever the runners exited with.
    [['interrupted', 'runner'], [108, 0], 130],
  ])('failure kinds %j, runner exits %j: exit %i', (kinds, exits, code) => {
    expect(exitCodeOf(result(kinds, exits), false)).toBe(code);
  });
});
