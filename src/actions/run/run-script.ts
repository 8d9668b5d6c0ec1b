import type { RunConfig } from '../../config.ts';
import { RUN_CONFIG_INPUTS } from '../../config.ts';
import { errorMessage } from '../../errors.ts';
import { kubernetesEnvironment } from '../../inputs/kubernetes.ts';
import type { Logger } from '../../log.ts';
import { htmlReportPath, writeHtmlReport } from '../../render/html/file.ts';
import type { RunResult } from '../../result/schema.ts';
import { newRunId } from '../../run/plan.ts';
import { backendFor } from './backend.ts';
import type { RunActionInputs } from './inputs.ts';
import type { RunActionDeps } from './outcome.ts';

/** One script's distributed test, and the HTML report next to its result. */

/**
 * One distributed test of one script, with a run id of its own (its Kubernetes objects, its
 * samples' `k6d_run` tag and its result carry it).
 * @param runIds the step's run ids so far; this run's is added (the post step reads them).
 * @param log where its lines go: the step log, or one whose lines start with the script.
 * @throws what runTest throws (ConfigurationError, RunError `start`/`interrupted`), and
 *   ConfigurationError from the backend's inputs (see backendFor).
 */
export function runScript(
  inputs: RunActionInputs,
  config: RunConfig,
  runIds: string[],
  log: Logger,
  deps: RunActionDeps,
): Promise<RunResult> {
  const runId = newRunId();
  return deps.runTest(config, {
    createBackend: backendFor(inputs, runId, runIds, log, deps),
    runId,
    log,
    signal: deps.signal,
    inputNames: RUN_CONFIG_INPUTS,
    environment: inputs.backend === 'kubernetes' ? kubernetesEnvironment(inputs) : {},
    ...(inputs.zones
      ? { zones: inputs.zones.map(({ name, share, runners }) => ({ name, share, runners })) }
      : {}),
  });
}

/**
 * Writes the HTML report next to the result JSON (src/render/html/file.ts).
 * @returns its path, or '' (with a warning) when it could not be written: the result stands.
 */
export async function writeHtmlNextTo(
  resultPath: string,
  result: RunResult,
  inputs: Pick<RunActionInputs, 'dashboardUrl'>,
  log: Logger,
): Promise<string> {
  const file = htmlReportPath(resultPath);
  try {
    await writeHtmlReport(file, {
      result,
      ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}),
    });
    log.info(`HTML report written to ${file}`);
    return file;
  } catch (error) {
    log.warning(`could not write the HTML report ${file}: ${errorMessage(error)}`);
    return '';
  }
}

/** A logger whose lines start with the script, so that scripts run at once can be told apart. */
export function scriptLogger(script: string, log: Logger): Logger {
  const tag = (m: string) => `[${script}] ${m}`;
  return {
    info: (m) => log.info(tag(m)),
    warning: (m) => log.warning(tag(m)),
    error: (m) => log.error(tag(m)),
    debug: (m) => log.debug(tag(m)),
  };
}
