import { describe, expect, it } from 'vitest';
import {
  describeExit,
  isConfigurationExit,
  isStopExit,
  K6_EXIT,
  K6_EXIT_CODES,
  runnerCompleted,
} from '../../../src/k6/exit-codes.ts';

describe('k6 exit codes', () => {
  it.each([
    // code, completed its segment, configuration error before the start, stopped
    [0, true, false, false],
    [99, true, false, false],
    [103, false, false, true],
    [104, false, true, false],
    [105, false, false, true],
    [107, false, true, false],
    [108, false, false, false],
    [137, false, false, false],
    [null, false, false, true],
  ])('exit %s: completed %s, configuration %s, stopped %s', (code, completed, configuration, stopped) => {
    expect(runnerCompleted(code)).toBe(completed);
    expect(isConfigurationExit(code)).toBe(configuration);
    expect(isStopExit(code)).toBe(stopped);
  });

  it('has a meaning for every code K6_EXIT names', () => {
    for (const code of Object.values(K6_EXIT)) expect(K6_EXIT_CODES[code]?.meaning).toBeTruthy();
  });

  it.each([
    [107, null, 'exit 107: script exception'],
    [137, 'OOMKilled', 'exit 137: failed (OOMKilled)'],
    [null, 'SIGKILL', 'killed by SIGKILL'],
    [null, undefined, 'did not exit'],
  ])('describes exit %s (%s) as "%s"', (code, signal, text) => {
    expect(describeExit(code, signal)).toBe(text);
  });
});
