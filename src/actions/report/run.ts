import * as core from '@actions/core';
import { applyOutcome, failStep, reportDeps } from '../common/step.ts';
import { actionContext } from './context.ts';
import { readReportInputs } from './inputs.ts';
import { report } from './report.ts';

/**
 * The runner of the `report` action: inputs -> logic -> outputs. The one place that talks to
 * @actions/core and the one try/catch: a ConfigurationError fails the step with its own one-line
 * message; anything else fails it with `report failed: …` and its stack in the debug log.
 */
export async function run(): Promise<void> {
  try {
    const inputs = readReportInputs((name) => core.getInput(name));
    const outcome = await report(inputs, reportDeps(inputs.token, actionContext()));
    for (const [name, value] of Object.entries(outcome.outputs)) core.setOutput(name, value);
    applyOutcome(outcome);
  } catch (error) {
    failStep(error, 'report failed');
  }
}
