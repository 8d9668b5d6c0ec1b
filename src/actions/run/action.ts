import { ConfigurationError } from '../../errors.ts';
import { expandScripts } from '../../inputs/scripts.ts';
import { resolveK6Binary } from '../../k6/binary.ts';
import { renderReport } from '../../render/markdown.ts';
import { runFailure, stepFailure } from '../common/failure.ts';
import { writeJUnitReport } from '../common/junit.ts';
import { runAbStep } from './ab.ts';
import type { RunActionInputs } from './inputs.ts';
import {
  type RunActionDeps,
  type RunActionOutcome,
  runOutputs,
  type ScriptOutcome,
  STATE,
  scriptOutcome,
  summaryOptions,
} from './outcome.ts';
import { runScript, writeHtmlNextTo } from './run-script.ts';
import { runScripts } from './scripts.ts';

/**
 * The logic of the `run` action: validated inputs -> one distributed test per script (Kubernetes
 * or local backend) -> the outcome the runner applies (outputs, job summary, failure). It takes
 * its clients and the step's environment as `deps` and never touches @actions/core; the only
 * effects it has on the step as it goes are log lines and the post step's state (`deps`).
 */

/**
 * Runs the step's test(s). Never throws: an error becomes the outcome's failure (a
 * ConfigurationError's own one line naming the input, else `k6 distributed run failed: …` with its
 * stack) with no outputs and no `ran`.
 *
 * One script: every output of action.yml (see {@link runOutputs}) and `results` with its one
 * entry; the job summary is its report (required: no GITHUB_STEP_SUMMARY fails the step); the
 * failure is the run's (its kinds: `thresholds`, `interrupted`, …) when it did not pass. Several
 * scripts: see {@link runScripts}.
 */
export async function runAction(inputs: RunActionInputs, deps: RunActionDeps): Promise<RunActionOutcome> {
  const runIds: string[] = [];
  const jobSummary = deps.jobSummary ?? inputs.jobSummary;
  try {
    if (inputs.config.k6Binary) resolveK6Binary(inputs.config.k6Binary, deps.environment, 'k6-binary');
    const scripts = await expandScripts(inputs.config.script, deps.cwd);
    if (inputs.ab && scripts.length > 1)
      throw new ConfigurationError(`ab-rounds: A/B rounds run one script; script names ${scripts.length}`);
    if (scripts.length > 1) return await runScripts(inputs, scripts, jobSummary, runIds, deps);
    const config = { ...inputs.config, script: scripts[0]! };
    if (inputs.ab) {
      const outcome = await runAbStep({ ...inputs, ab: inputs.ab }, config, runIds, jobSummary, deps);
      deps.saveState(STATE.cleaned, 'true');
      return outcome;
    }
    const result = await runScript(inputs, config, runIds, deps.log, deps);
    deps.saveState(STATE.cleaned, 'true');
    const html = await writeHtmlNextTo(config.resultPath, result, inputs, deps.log);
    const junit = await writeJUnitReport(config.junitPath, [{ script: config.script, result }], deps.log);
    const summary = renderReport(result, summaryOptions(inputs));
    const failure = runFailure(result);
    return {
      outputs: {
        ...runOutputs(result, config.resultPath, html),
        'junit-path': junit,
        results: JSON.stringify([
          scriptOutcome(config.script, config.resultPath, result),
        ] satisfies ScriptOutcome[]),
      },
      ...(jobSummary ? { jobSummary: { markdown: summary, required: true } } : {}),
      ...(failure ? { failure: { message: failure, kinds: result.failureKinds ?? [] } } : {}),
      ran: {
        runs: [{ script: config.script, resultPath: config.resultPath, result }],
        summary,
        cancelled: deps.signal.aborted,
      },
    };
  } catch (error) {
    deps.saveState(STATE.cleaned, 'true');
    return { outputs: {}, failure: stepFailure(error, 'k6 distributed run failed') };
  }
}
