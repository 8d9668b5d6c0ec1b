import { errorMessage, RunError } from '../../errors.ts';
import { scriptResultPath } from '../../inputs/scripts.ts';
import { renderReport } from '../../render/markdown.ts';
import type { FailureKind } from '../../result/schema.ts';
import type { StepFailure } from '../common/failure.ts';
import { writeJUnitReport } from '../common/junit.ts';
import type { RunActionInputs } from './inputs.ts';
import {
  type RunActionDeps,
  type RunActionOutcome,
  type ScriptOutcome,
  type ScriptRun,
  STATE,
  scriptOutcome,
  summaryOptions,
} from './outcome.ts';
import { runScript, scriptLogger, writeHtmlNextTo } from './run-script.ts';

/**
 * Several scripts in one step. One after another by default (the runners of one script would
 * compete with another's for the machine or the cluster and skew both results); with the
 * `parallel` input all at once, each its own distributed test (its lines in the log start with
 * `[script]`). Each script gets its own run id, result file ({@link scriptResultPath}), HTML report
 * and verdict; a script that fails does not stop the others; a cancelled workflow stops them all
 * (one after another: the next ones do not start; in parallel: every running test stops and is
 * reported `error`). Outputs: `verdict` (failed when any script did not pass), `thresholds-ok`,
 * `results` (JSON array of {@link ScriptOutcome}), `junit-path` (one JUnit file of every script);
 * the single-script metric outputs stay unset.
 * The failure's kinds: `interrupted` when cancelled, else those of every script that did not pass.
 * @param jobSummary whether the outcome asks for the job summary (written when possible).
 */
export async function runScripts(
  inputs: RunActionInputs,
  scripts: string[],
  jobSummary: boolean,
  runIds: string[],
  deps: RunActionDeps,
): Promise<RunActionOutcome> {
  const { log, signal } = deps;
  const errorKinds = new Map<string, FailureKind[]>();
  const run = async (script: string, index: number): Promise<ScriptRun> => {
    const resultPath = scriptResultPath(inputs.config.resultPath, script);
    log.info(`script ${index + 1} of ${scripts.length}: ${script} (result ${resultPath})`);
    const scriptLog = inputs.parallel ? scriptLogger(script, log) : log;
    try {
      const config = { ...inputs.config, script, resultPath };
      const result = await runScript(inputs, config, runIds, scriptLog, deps);
      await writeHtmlNextTo(resultPath, result, inputs, log);
      return { script, resultPath, result };
    } catch (error) {
      errorKinds.set(script, error instanceof RunError ? [error.kind] : []);
      return { script, resultPath, error: errorMessage(error) };
    }
  };
  const runs: ScriptRun[] = [];
  if (inputs.parallel) {
    log.info(`${scripts.length} scripts at once (parallel: true): they share the machine or the cluster`);
    runs.push(...(await Promise.all(scripts.map(run))));
  } else {
    for (const [index, script] of scripts.entries()) {
      if (signal.aborted) break;
      runs.push(await run(script, index));
    }
  }
  deps.saveState(STATE.cleaned, 'true');
  const outcomes: ScriptOutcome[] = runs.map((r) =>
    r.result
      ? scriptOutcome(r.script, r.resultPath, r.result)
      : { script: r.script, verdict: 'error', 'result-path': r.resultPath, failure: r.error ?? '' },
  );
  const sections = runs.map(
    (r) =>
      `## \`${r.script}\`\n\n${r.result ? renderReport(r.result, summaryOptions(inputs)) : `❌ no result: ${r.error}\n`}`,
  );
  const summary = `# k6 distributed: ${scripts.length} scripts${inputs.parallel ? ' (run at once)' : ''}\n\n${sections.join('\n')}`;
  const junit = await writeJUnitReport(inputs.config.junitPath, runs, log);
  const failed = outcomes.filter((o) => o.verdict !== 'passed');
  const cancelled = signal.aborted;
  let failure: StepFailure | undefined;
  if (cancelled)
    failure = {
      message: `k6 distributed run interrupted: the workflow was cancelled; ${runs.length} of ${scripts.length} scripts started, every runner stopped`,
      kinds: ['interrupted'],
    };
  else if (failed.length > 0)
    failure = {
      message: `k6 distributed run failed: ${failed.length} of ${scripts.length} scripts: ${failed.map((o) => `${o.script} (${o.failure})`).join('; ')}`,
      kinds: [
        ...new Set(
          runs.flatMap((r) => (r.result ? (r.result.failureKinds ?? []) : (errorKinds.get(r.script) ?? []))),
        ),
      ],
    };
  return {
    outputs: {
      verdict: failed.length === 0 && outcomes.length === scripts.length ? 'passed' : 'failed',
      'thresholds-ok': String(failed.length === 0),
      results: JSON.stringify(outcomes),
      'junit-path': junit,
    },
    ...(jobSummary ? { jobSummary: { markdown: summary, required: false } } : {}),
    ...(failure ? { failure } : {}),
    ran: { runs, summary, cancelled },
  };
}
