import { applyOutcome, failStep, getInput, reportDeps, setOutputs } from '../common/step.ts';
import { actionContext } from './context.ts';
import { readReportInputs } from './inputs.ts';
import { report } from './report.ts';

/**
 * The runner of the `report` action: inputs -> logic -> outputs. The one place of the action that
 * talks to @actions/core (through src/actions/common/step.ts) and the one try/catch: a
 * ConfigurationError fails the step with its own one-line message; anything else fails it with
 * `report failed: …` and its stack in the debug log.
 */
export async function run(): Promise<void> {
  try {
    const inputs = readReportInputs(getInput);
    const outcome = await report(inputs, reportDeps(inputs.token, actionContext()));
    setOutputs({ ...outcome.outputs });
    applyOutcome(outcome);
  } catch (error) {
    failStep(error, 'report failed');
  }
}
