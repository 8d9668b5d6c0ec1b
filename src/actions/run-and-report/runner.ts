import { ConfigurationError } from '../../errors.ts';
import { expandScripts } from '../../inputs/scripts.ts';
import {
  applyOutcome,
  failStep,
  getInput,
  reportDeps,
  setOutputs,
  stepLog,
  writeSummary,
} from '../common/step.ts';
import { actionContext } from '../report/context.ts';
import type { ReportActionInputs } from '../report/inputs.ts';
import type { ReportDeps, ReportOutcome, ReportOutputs } from '../report/outcome.ts';
import { report as reportOne, resolveMode } from '../report/report.ts';
import { reportScripts } from '../report/scripts.ts';
import { type RunStepOutcome, run as runStep } from '../run/runner.ts';
import { checkAbReportMode, type MainInputs, readMainInputs } from './inputs.ts';

/**
 * The root action: the run action's runner, then the report action's logic on its result, in one
 * step and one process. The run part is the run action exactly (it reads the same inputs, sets the
 * same outputs, fails the step the same way, and leaves the same state for the post step,
 * dist/run-post.js); the report part takes its clients here and sets its outputs under names that
 * do not collide with the run's (`report-mode`, `report-verdict`, …).
 */

/** The report's outputs as the root action names them (`run-verdict` is the run's `verdict`). */
const REPORT_OUTPUTS: ReadonlyArray<[from: keyof ReportOutputs, to: string]> = [
  ['mode', 'report-mode'],
  ['verdict', 'report-verdict'],
  ['regressions', 'regressions'],
  ['baseline-sha', 'baseline-sha'],
  ['baseline-run-id', 'baseline-run-id'],
  ['comment-url', 'comment-url'],
  ['artifact-id', 'artifact-id'],
];

function setReportOutputs(outputs?: ReportOutputs): void {
  setOutputs(
    Object.fromEntries(
      REPORT_OUTPUTS.map(([from, to]) => [to, outputs?.[from] ?? (from === 'regressions' ? '[]' : '')]),
    ),
  );
}

/**
 * Reads every input and refuses a report mode that cannot follow a run, A/B rounds in report mode
 * `store`, and one `baseline` file for several scripts (each is compared with its own stored baseline).
 */
async function readInputs(): Promise<MainInputs> {
  const inputs = readMainInputs(getInput);
  if (inputs.report && resolveMode(inputs.report.mode, actionContext()) === 'post-bundle') {
    throw new ConfigurationError(
      'mode: post-bundle posts the report bundle of another run and runs no test; use actions/report in the workflow_run workflow',
    );
  }
  checkAbReportMode(
    getInput('ab-rounds').trim() !== '',
    inputs.report ? resolveMode(inputs.report.mode, actionContext()) : undefined,
  );
  if (inputs.report?.baselinePath && (await expandScripts(getInput('script'), process.cwd())).length > 1) {
    throw new ConfigurationError(
      'baseline: one result file cannot be the baseline of several scripts; leave it empty to compare each script with its own stored baseline',
    );
  }
  return inputs;
}

/**
 * The report of the run: of its one result (actions/report's logic), or of several scripts
 * (src/actions/report/scripts.ts: one comment with a section per script, each script compared
 * with its own baseline).
 */
function reportOf(report: ReportActionInputs, deps: ReportDeps, ran: RunStepOutcome): Promise<ReportOutcome> {
  if (ran.runs.length === 1) return reportOne(report, deps);
  return reportScripts(
    report,
    deps,
    ran.runs.map((r) => ({
      script: r.script,
      resultPath: r.resultPath,
      ...(r.result ? {} : { error: r.error ?? 'no result' }),
    })),
  );
}

/** The step. Never throws: failures end in `core.setFailed` with one line. */
export async function run(): Promise<void> {
  let inputs: MainInputs;
  try {
    inputs = await readInputs();
  } catch (error) {
    failStep(error, 'k6 distributed run failed');
    setReportOutputs();
    return;
  }

  // A cancelled workflow stops the runners (the run's runner handles that); no report follows.
  let cancelled = false;
  const onSignal = () => {
    cancelled = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // The run's runner reads the same inputs (getInput). When the report runs, it writes the
  // job summary (the comparison includes the run's report), so the run does not write it too.
  let ran: RunStepOutcome | undefined;
  try {
    ran = await runStep(inputs.report ? { jobSummary: false } : {});
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  cancelled ||= ran?.cancelled ?? false;
  const withResult = ran?.runs.some((r) => r.result || r.ab) ?? false;

  if (!inputs.report || !ran || !withResult || cancelled) {
    if (inputs.report)
      stepLog.info(
        cancelled ? 'report: skipped, the run was cancelled' : 'report: skipped, the run wrote no result',
      );
    if (inputs.report && ran && inputs.jobSummary) await writeSummary(ran.summary);
    setReportOutputs();
    return;
  }

  let summaryWritten = false;
  try {
    const jobSummary = inputs.jobSummary;
    const deps = reportDeps(inputs.report.token, actionContext(), async (markdown) => {
      if (!jobSummary) return;
      await writeSummary(markdown);
      summaryWritten = true;
    });
    const outcome = await reportOf(inputs.report, deps, ran);
    setReportOutputs(outcome.outputs);
    applyOutcome(outcome);
  } catch (error) {
    // The run's report still reaches the job summary when the comparison could not be made.
    if (!summaryWritten && inputs.jobSummary) await writeSummary(ran.summary);
    setReportOutputs();
    failStep(error, 'report failed');
  }
}
