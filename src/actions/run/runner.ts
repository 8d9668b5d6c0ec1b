import { errorMessage } from '../../errors.ts';
import { runTest } from '../../run/index.ts';
import {
  applyFailure,
  failStep,
  getInput,
  getState,
  maskSecrets,
  saveState,
  setOutputs,
  stepLog,
  writeSummary,
} from '../common/step.ts';
import { runAction } from './action.ts';
import { backends, kubeconfigMasks } from './backend.ts';
import { cleanupLeftovers, clusterOf } from './cleanup.ts';
import { readRunInputs } from './inputs.ts';
import { type RunActionOutcome, type RunStepOutcome, STATE } from './outcome.ts';

/**
 * The runner of the `run` action and of its post step: inputs -> logic (action.ts, cleanup.ts) ->
 * the step. It reaches @actions/core only through src/actions/common/step.ts, turns SIGINT and
 * SIGTERM (a cancelled workflow) into the logic's abort signal, and holds the one try/catch that
 * fails the step for what the logic does not turn into its outcome (a bad input, a job summary
 * that cannot be written).
 */

export type { RunActionOutcome, RunStepOutcome, ScriptOutcome, ScriptRun } from './outcome.ts';

/** Applies the logic's outcome to the step: outputs, then the job summary, then the failure. */
async function applyRunOutcome(outcome: RunActionOutcome): Promise<void> {
  setOutputs(outcome.outputs);
  if (outcome.jobSummary) await writeSummary(outcome.jobSummary.markdown, outcome.jobSummary.required);
  if (outcome.failure) applyFailure(outcome.failure);
}

/**
 * The main step (dist/run.js; the root action's run part). Never throws: failures end in
 * `core.setFailed` with one line.
 * @param options.jobSummary whether to write the report to the job summary; default the
 *   `job-summary` input (the root action turns it off when its report step writes the summary).
 * @returns every script's run (one, or several), or undefined when no script produced a result
 *   for a reason that fails the step before or instead of a run (bad input, a run that crashed).
 */
export async function run(options: { jobSummary?: boolean } = {}): Promise<RunStepOutcome | undefined> {
  const controller = new AbortController();
  const onSignal = (signal: string) => {
    stepLog.warning(`${signal} received (the workflow was cancelled): stopping every runner`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const inputs = readRunInputs(getInput);
    maskSecrets(kubeconfigMasks(inputs.kubeconfig));
    const outcome = await runAction(inputs, {
      log: stepLog,
      environment: process.env,
      cwd: process.cwd(),
      signal: controller.signal,
      given: (name) => getInput(name).trim() !== '',
      saveState,
      backends,
      runTest,
      ...(options.jobSummary === undefined ? {} : { jobSummary: options.jobSummary }),
    });
    await applyRunOutcome(outcome);
    return outcome.ran;
  } catch (error) {
    saveState(STATE.cleaned, 'true');
    failStep(error, 'k6 distributed run failed');
    return undefined;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * The post step (dist/run-post.js): removes what a cancelled or crashed main step left on the
 * cluster (cleanup.ts). Never fails the job: an error becomes a warning.
 */
export async function post(): Promise<void> {
  try {
    await cleanupLeftovers({
      log: stepLog,
      getState,
      inputs: () => readRunInputs(getInput),
      cluster: clusterOf,
    });
  } catch (error) {
    stepLog.warning(`post: cleanup failed: ${errorMessage(error)}`);
  }
}
