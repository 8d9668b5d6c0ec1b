/**
 * k6 exit codes (k6 v2.2.0 `errext/exitcodes/codes.go`) and what each means for one runner of a
 * distributed run, in one table.
 */

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

/** What one k6 exit code means for a runner. */
export interface K6ExitMeaning {
  /** One phrase for the user, e.g. `script exception`. */
  meaning: string;
  /** The runner completed its execution segment (0; 99, whose slice thresholds the global verdict ignores). */
  completed?: true;
  /** Before the start, the cause is in the script or its options: a configuration error (exit 2). */
  configuration?: true;
  /** The runner ended because it was told to stop (REST API stop, a signal). */
  stopped?: true;
}

/** Every exit code k6 documents, with its meaning for a runner. Unknown codes mean `failed`. */
export const K6_EXIT_CODES: Readonly<Record<number, K6ExitMeaning>> = {
  0: { meaning: 'completed', completed: true },
  97: { meaning: 'cloud test run failed' },
  98: { meaning: 'failed to get cloud progress' },
  99: {
    meaning: "completed (its own slice's thresholds failed; the global verdict ignores them)",
    completed: true,
  },
  100: { meaning: 'setup() timed out' },
  101: { meaning: 'teardown() timed out' },
  102: { meaning: 'timed out' },
  103: { meaning: 'stopped through the REST API', stopped: true },
  104: { meaning: 'invalid configuration', configuration: true },
  105: { meaning: 'aborted by a signal', stopped: true },
  106: { meaning: 'could not start the REST API' },
  107: { meaning: 'script exception', configuration: true },
  108: { meaning: 'the script called test.abort()' },
  109: { meaning: 'k6 panicked' },
  // The runner ran its segment to the end; the run is failed (kind `marked-failed`) and exits 110.
  110: { meaning: 'the script called exec.test.fail()', completed: true },
  255: { meaning: 'failed' },
};

function exitMeaning(code: number | null): K6ExitMeaning | undefined {
  return code === null ? undefined : K6_EXIT_CODES[code];
}

/**
 * What an exit code means, e.g. `exit 107: script exception`; with the platform's reason when one
 * came with it (`exit 137: failed (OOMKilled)`), or the signal when the process had no code.
 */
export function describeExit(code: number | null, signal?: string | null): string {
  if (code === null) return signal ? `killed by ${signal}` : 'did not exit';
  return `exit ${code}: ${exitMeaning(code)?.meaning ?? 'failed'}${signal ? ` (${signal})` : ''}`;
}

/**
 * Whether a runner completed its segment. 0 is success; 99 is too, because a runner judges only
 * its 1/N slice and the global verdict is computed from the aggregate, not from runner exit codes;
 * so is 110 (`exec.test.fail()` lets the test run to its end: k6 `internal/cmd/run.go`).
 */
export function runnerCompleted(code: number | null): boolean {
  return exitMeaning(code)?.completed === true;
}

/** Whether a runner that exited with `code` before the start failed on the script or its options (104, 107). */
export function isConfigurationExit(code: number | null): boolean {
  return exitMeaning(code)?.configuration === true;
}

/** Whether a runner ended because it was stopped (103 REST stop, 105 signal) or killed (no code). */
export function isStopExit(code: number | null): boolean {
  return code === null || exitMeaning(code)?.stopped === true;
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
