/**
 * k6 exit codes (k6 v2.2.0 `errext/exitcodes/codes.go`) and what each means for one runner of a
 * distributed run.
 */

import { ConfigurationError } from '../errors.ts';

/** The k6 exit codes this product tells apart. */
export const K6_EXIT = {
  ok: 0,
  cloudTestRunFailed: 97,
  cloudFailedToGetProgress: 98,
  thresholdsHaveFailed: 99,
  setupTimeout: 100,
  teardownTimeout: 101,
  genericTimeout: 102,
  scriptStoppedFromRESTAPI: 103,
  invalidConfig: 104,
  externalAbort: 105,
  cannotStartRESTAPI: 106,
  scriptException: 107,
  scriptAborted: 108,
  goPanic: 109,
  markedAsFailed: 110,
  other: 255,
} as const;

const MEANINGS: Record<number, string> = {
  0: 'completed',
  97: 'cloud test run failed',
  98: 'failed to get cloud progress',
  99: "completed (its own slice's thresholds failed; the global verdict ignores them)",
  100: 'setup() timed out',
  101: 'teardown() timed out',
  102: 'timed out',
  103: 'stopped through the REST API',
  104: 'invalid configuration',
  105: 'aborted by a signal',
  106: 'could not start the REST API',
  107: 'script exception',
  108: 'the script called test.abort()',
  109: 'k6 panicked',
  110: 'the script called exec.test.fail()',
  255: 'failed',
};

/**
 * What an exit code means, e.g. `exit 107: script exception`; with the platform's reason when one
 * came with it (`exit 137: failed (OOMKilled)`), or the signal when the process had no code.
 */
export function describeExit(code: number | null, signal?: string | null): string {
  if (code === null) return signal ? `killed by ${signal}` : 'did not exit';
  return `exit ${code}: ${MEANINGS[code] ?? 'failed'}${signal ? ` (${signal})` : ''}`;
}

/**
 * Whether a runner completed its segment. 0 is success; 99 is too, because a runner judges only
 * its 1/N slice and the global verdict is computed from the aggregate, not from runner exit codes.
 */
export function runnerCompleted(code: number | null): boolean {
  return code === K6_EXIT.ok || code === K6_EXIT.thresholdsHaveFailed;
}

/**
 * The exit code `k6 run` of the whole test would have given, where a runner's own code says it:
 * `test.abort()` (108), a script exception (107), `exec.test.fail()` (110), a setup or teardown
 * timeout (100, 101), in that order of precedence (an abort ends the test before the end-of-test
 * checks; 110 wins over crossed thresholds in k6's `cmd/run.go`).
 * @param codes the runners' exit codes (`null` for a runner that was killed).
 * @returns the code, or undefined when no runner's code is one of these.
 */
export function k6ExitCodeOfRunners(codes: ReadonlyArray<number | null>): number | undefined {
  const order = [
    K6_EXIT.scriptAborted,
    K6_EXIT.scriptException,
    K6_EXIT.markedAsFailed,
    K6_EXIT.setupTimeout,
    K6_EXIT.teardownTimeout,
  ];
  return order.find((code) => codes.includes(code));
}

/**
 * A mistake k6 itself refused before any runner started (`k6 archive`/`k6 inspect` exited 104,
 * invalid options, or 107, a script exception such as a syntax error): the CLI exits with k6's
 * code, as a plain `k6 run` of the script would, instead of its own 2.
 */
export class K6RefusedError extends ConfigurationError {
  override name = 'K6RefusedError';
  /** k6's exit code: {@link K6_EXIT.invalidConfig} or {@link K6_EXIT.scriptException}. */
  readonly k6ExitCode: number;
  constructor(message: string, k6ExitCode: number) {
    super(message);
    this.k6ExitCode = k6ExitCode;
  }
}
