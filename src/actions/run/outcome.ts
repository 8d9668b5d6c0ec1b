import type { RunConfig } from '../../config.ts';
import { K6_METRIC } from '../../k6/metrics.ts';
import type { Logger } from '../../log.ts';
import type { ReportOptions } from '../../render/markdown.ts';
import type { AbResult } from '../../result/ab-schema.ts';
import type { RunResult } from '../../result/schema.ts';
import type { preflightSide } from '../../run/ab.ts';
import type { RunDependencies } from '../../run/index.ts';
import { runFailure, type StepFailure } from '../common/failure.ts';
import type { RunActionInputs } from './inputs.ts';

/** What the run action's logic needs from outside, what it returns, and the parts both share. */

/** State shared with the post step (GITHUB_STATE), by name. */
export const STATE = {
  runId: 'runId',
  namespace: 'namespace',
  cleaned: 'cleaned',
  cleanup: 'cleanup',
} as const;

/** The name of one value of {@link STATE}. */
export type StateName = (typeof STATE)[keyof typeof STATE];

/** Makes the backend of one run, given the k6 binary and a private work folder (runTest's seam). */
export type CreateBackend = RunDependencies['createBackend'];

/** The backends the run action can make; tests give fakes. */
export interface BackendFactory {
  /** `backend: local`: k6 processes on this machine, with `env` as the runners' environment. */
  local(env: Record<string, string>): CreateBackend;
  /**
   * `backend: kubernetes`: resolves the cluster and the namespace now, and makes the run's Pods.
   * @throws ConfigurationError when the credentials the inputs name cannot be loaded.
   */
  kubernetes(
    inputs: RunActionInputs,
    runId: string,
    log: Logger,
  ): { namespace: string; create: CreateBackend };
}

/** What {@link runAction} needs from outside: in the action the step's, in tests fakes. */
export interface RunActionDeps {
  /** The step log (the action passes @actions/core). */
  log: Logger;
  /** The step's environment: K6_BINARY, and the variables `secret-env` names with backend local. */
  environment: NodeJS.ProcessEnv;
  /** The workspace folder, where `script` patterns are matched. */
  cwd: string;
  /** Aborted when the workflow is cancelled (SIGINT/SIGTERM): every runner stops. */
  signal: AbortSignal;
  /** Whether the user gave an input (not blank): names the Pod-only inputs backend local ignores. */
  given(input: string): boolean;
  /**
   * Saves a value for the post step at once (GITHUB_STATE), not in the outcome: a step that is
   * killed mid-run must still leave its run ids for the post step's cleanup.
   */
  saveState(name: StateName, value: string): void;
  /** Makes the backend of each run (the real ones: src/actions/run/backend.ts `backends`). */
  backends: BackendFactory;
  /** Runs one distributed test: src/run/index.ts `runTest` (its own tests cover it). */
  runTest(config: RunConfig, deps: RunDependencies): Promise<RunResult>;
  /**
   * Checks one side of A/B rounds before any round runs: src/run/ab.ts `preflightSide` (a real k6
   * preflight) unless a test gives another.
   */
  checkAbSide?: typeof preflightSide;
  /**
   * Whether the run's report goes to the job summary; default the `job-summary` input (the root
   * action turns it off when its report writes the summary).
   */
  jobSummary?: boolean;
}

/**
 * One script's entry in the `results` output (a JSON array, in the order the `script` input names
 * the scripts). `verdict` is `error` when the script produced no result (bad script, runner failure
 * before a summary, a cancelled step); `failure` is the one-line reason whenever it did not pass.
 */
export interface ScriptOutcome {
  script: string;
  verdict: 'passed' | 'failed' | 'error';
  'result-path': string;
  failure?: string;
}

/** One script of the step and what its run left: its result, or why there is none. */
export interface ScriptRun {
  script: string;
  /** Where its result JSON is written (and the report reads it). */
  resultPath: string;
  /** Absent when the script produced no result (then `error` says why), and with `ab`. */
  result?: RunResult;
  /** With `ab-rounds`: the A/B result written at `resultPath` (src/actions/run/ab.ts). */
  ab?: AbResult;
  error?: string;
}

/** What the run step leaves for the root action's report. */
export interface RunStepOutcome {
  /** Every script that started, in the order the `script` input names them. */
  runs: ScriptRun[];
  /** The run's job summary (markdown), whether or not the step wrote it. */
  summary: string;
  /** Whether a cancelled workflow stopped the step. */
  cancelled: boolean;
}

/** What {@link runAction} returns and the runner applies, in this order. */
export interface RunActionOutcome {
  /** The outputs to set, in order (action.yml's names; numbers as decimal strings). */
  outputs: Record<string, string>;
  /**
   * The job summary to write, when the step writes one. `required`: the write fails the step when
   * the runner gives no GITHUB_STEP_SUMMARY (one script); otherwise that is logged (several).
   */
  jobSummary?: { markdown: string; required: boolean };
  /** Set when the step fails: one line, and the failure kinds it comes from. */
  failure?: StepFailure;
  /**
   * What the run left for a report; absent when no script produced a result for a reason that
   * fails the step before or instead of a run (a bad input, a run that could not start).
   */
  ran?: RunStepOutcome;
}

/**
 * The outputs of one script's result. Units: rps req/s, p95/p99/start-skew ms, error-rate a
 * fraction; p95/p99 of `http_req_duration{expected_response:true}` when k6 has it.
 * @param htmlPath the HTML report written next to the result ('' when it could not be written).
 */
export function runOutputs(result: RunResult, resultPath: string, htmlPath = ''): Record<string, string> {
  const duration =
    result.metrics[K6_METRIC.httpReqDurationExpected] ?? result.metrics[K6_METRIC.httpReqDuration];
  return {
    verdict: result.verdict,
    'thresholds-ok': String(result.thresholdsOk),
    'result-path': resultPath,
    'html-report': htmlPath,
    'run-id': result.runId ?? '',
    rps: String(result.metrics[K6_METRIC.httpReqs]?.values.rate ?? 0),
    p95: String(duration?.values['p(95)'] ?? 0),
    p99: String(duration?.values['p(99)'] ?? 0),
    'error-rate': String(result.metrics[K6_METRIC.httpReqFailed]?.values.rate ?? 0),
    'start-skew': String(result.startSkewMs),
    // Set by A/B rounds only (src/actions/run/ab.ts); empty for one run, so every declared output is set.
    'ab-verdict': '',
  };
}

/** The `results` entry of a script that produced a result. */
export function scriptOutcome(script: string, resultPath: string, result: RunResult): ScriptOutcome {
  if (!runFailure(result)) return { script, verdict: 'passed', 'result-path': resultPath };
  return { script, verdict: 'failed', 'result-path': resultPath, failure: result.failures.join('; ') };
}

/** How the run's job summary is drawn: with the charts, and the dashboard link when asked. */
export function summaryOptions(inputs: Pick<RunActionInputs, 'dashboardUrl'>): ReportOptions {
  return { charts: true, ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}) };
}
