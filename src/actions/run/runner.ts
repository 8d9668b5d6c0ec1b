import * as core from '@actions/core';
import type { Backend } from '../../backends/backend.ts';
import { KubernetesBackend } from '../../backends/kubernetes/backend.ts';
import { deleteRun } from '../../backends/kubernetes/cleanup.ts';
import { defaultNamespace, kubeconfigSecrets, loadKubeConfig } from '../../backends/kubernetes/kubeconfig.ts';
import type { CleanupPolicy } from '../../backends/kubernetes/options.ts';
import { LocalBackend } from '../../backends/local/backend.ts';
import { RUN_CONFIG_INPUTS, type RunConfig } from '../../config.ts';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import { kubernetesBackendOptions, kubernetesEnvironment } from '../../inputs/kubernetes.ts';
import { expandScripts, scriptResultPath } from '../../inputs/scripts.ts';
import { resolveK6Binary } from '../../k6/binary.ts';
import { K6_METRIC } from '../../k6/metrics.ts';
import type { Logger } from '../../log.ts';
import { htmlReportPath, writeHtmlReport } from '../../render/html/file.ts';
import type { HtmlReportInput } from '../../render/html/report.ts';
import { type ReportOptions, renderReport } from '../../render/markdown.ts';
import type { RunResult } from '../../result/schema.ts';
import { runTest } from '../../run/index.ts';
import { newRunId } from '../../run/plan.ts';
import { runFailure } from '../common/failure.ts';
import { failStep, writeSummary } from '../common/step.ts';
import { type RunActionInputs, readRunInputs } from './inputs.ts';

/**
 * The `run` action: inputs -> a distributed run (Kubernetes or local backend) -> outputs, job
 * summary and the step's verdict. The one place that catches and calls `core.setFailed`.
 */

/** State shared with the post step (GITHUB_STATE). */
export const STATE = {
  runId: 'runId',
  namespace: 'namespace',
  cleaned: 'cleaned',
  cleanup: 'cleanup',
} as const;

const actionLog: Logger = core;

/**
 * Masks the credentials of the kubeconfig input in the log: the whole input when it is one line
 * (base64, or JSON on one line), and each credential inside it ({@link kubeconfigSecrets}: block or
 * flow YAML, JSON). GitHub masks line by line, so a multi-line value is never registered whole.
 */
function maskKubeconfig(kubeconfig: string | undefined): void {
  if (!kubeconfig) return;
  const trimmed = kubeconfig.trim();
  if (!trimmed.includes('\n')) core.setSecret(trimmed);
  for (const secret of kubeconfigSecrets(kubeconfig)) core.setSecret(secret);
}

/** The cluster credentials the inputs name (see loadKubeConfig for the order of sources). */
function kubeConfigOf(inputs: RunActionInputs) {
  return loadKubeConfig({
    ...(inputs.kubeconfig ? { kubeconfig: inputs.kubeconfig } : {}),
    ...(inputs.context ? { context: inputs.context } : {}),
  });
}

/**
 * The inputs without a default that shape runner Pods or reach the cluster only: with
 * `backend: local` each one given is named in one warning.
 */
const POD_ONLY_INPUTS = [
  'node-selector',
  'tolerations',
  'resources',
  'labels',
  'sysctls',
  'namespace',
  'kubeconfig',
  'context',
] as const;

/**
 * The runners' environment with `backend: local`: the `env` values, and each `secret-env`
 * variable from this step's environment (a Kubernetes Secret cannot be read here; a workflow gives
 * the secret as `env:` of the step, which GitHub masks in the log).
 * @throws ConfigurationError naming `secret-env` when a variable is not in the step's environment.
 */
export function localRunnerEnv(inputs: RunActionInputs, environment = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of inputs.env) {
    if ('value' in e) {
      env[e.name] = e.value;
      continue;
    }
    const value = environment[e.name];
    if (value === undefined) {
      throw new ConfigurationError(
        `secret-env: ${e.name} names the Kubernetes Secret ${e.secret}/${e.key}, which backend local cannot read; give the step "env: ${e.name}: \${{ secrets.… }}" instead`,
      );
    }
    env[e.name] = value;
  }
  return env;
}

function makeBackend(
  inputs: RunActionInputs,
  runId: string,
  runIds: string[],
  log: Logger,
): (k6: string, workDir: string) => Backend {
  if (inputs.backend === 'local') {
    const ignored = POD_ONLY_INPUTS.filter((name) => core.getInput(name).trim() !== '');
    if (ignored.length > 0 && runIds.length === 0) {
      core.warning(
        `${ignored.join(', ')}: ${ignored.length === 1 ? 'applies' : 'apply'} to Kubernetes runner Pods only; ignored with backend local`,
      );
    }
    runIds.push(runId);
    const env = localRunnerEnv(inputs);
    return (k6, workDir) => new LocalBackend(k6, workDir, { env });
  }
  const kc = kubeConfigOf(inputs);
  const namespace = inputs.namespace ?? defaultNamespace(kc);
  // Every run id of the step (several scripts, maybe at once): the post step removes them all.
  runIds.push(runId);
  core.saveState(STATE.runId, runIds.join(','));
  core.saveState(STATE.namespace, namespace);
  core.saveState(STATE.cleanup, inputs.cleanup);
  return () => new KubernetesBackend(kubernetesBackendOptions(inputs, { kc, namespace, runId, log }));
}

/**
 * Sets the outputs from the result. Units: rps req/s, p95/p99/start-skew ms, error-rate a fraction.
 * @param htmlPath the HTML report written next to the result ('' when it could not be written).
 */
export function setOutputs(result: RunResult, resultPath: string, htmlPath = ''): void {
  const duration =
    result.metrics[K6_METRIC.httpReqDurationExpected] ?? result.metrics[K6_METRIC.httpReqDuration];
  core.setOutput('verdict', result.verdict);
  core.setOutput('thresholds-ok', String(result.thresholdsOk));
  core.setOutput('result-path', resultPath);
  core.setOutput('html-report', htmlPath);
  core.setOutput('run-id', result.runId ?? '');
  core.setOutput('rps', String(result.metrics[K6_METRIC.httpReqs]?.values.rate ?? 0));
  core.setOutput('p95', String(duration?.values['p(95)'] ?? 0));
  core.setOutput('p99', String(duration?.values['p(99)'] ?? 0));
  core.setOutput('error-rate', String(result.metrics[K6_METRIC.httpReqFailed]?.values.rate ?? 0));
  core.setOutput('start-skew', String(result.startSkewMs));
}

/** How the run's job summary is drawn: with the charts, and the dashboard link when asked. */
export function summaryOptions(inputs: Pick<RunActionInputs, 'dashboardUrl'>): ReportOptions {
  return { charts: true, ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}) };
}

/**
 * Writes the HTML report next to the result JSON (src/render/html/file.ts).
 * @returns its path, or '' (with a warning) when it could not be written: the result stands.
 */
async function writeHtmlNextTo(resultPath: string, input: HtmlReportInput): Promise<string> {
  const file = htmlReportPath(resultPath);
  try {
    await writeHtmlReport(file, input);
    core.info(`HTML report written to ${file}`);
    return file;
  } catch (error) {
    core.warning(`could not write the HTML report ${file}: ${errorMessage(error)}`);
    return '';
  }
}

/**
 * One distributed test of one script, with a run id of its own (its Kubernetes objects, its
 * samples' `k6d_run` tag and its result carry it).
 * @param runIds the step's run ids so far; this run's is added (the post step reads them).
 */
function runOne(
  inputs: RunActionInputs,
  config: RunConfig,
  signal: AbortSignal,
  runIds: string[],
  log: Logger = actionLog,
): Promise<RunResult> {
  const runId = newRunId();
  return runTest(config, {
    createBackend: makeBackend(inputs, runId, runIds, log),
    runId,
    log,
    signal,
    inputNames: RUN_CONFIG_INPUTS,
    environment: inputs.backend === 'kubernetes' ? kubernetesEnvironment(inputs) : {},
  });
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

function scriptOutcome(script: string, resultPath: string, result: RunResult): ScriptOutcome {
  if (!runFailure(result)) return { script, verdict: 'passed', 'result-path': resultPath };
  return { script, verdict: 'failed', 'result-path': resultPath, failure: result.failures.join('; ') };
}

/** One script of the step and what its run left: its result, or why there is none. */
export interface ScriptRun {
  script: string;
  /** Where its result JSON is written (and the report reads it). */
  resultPath: string;
  /** Absent when the script produced no result (then `error` says why). */
  result?: RunResult;
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

/** A logger whose lines start with the script, so that scripts run at once can be told apart. */
function scriptLogger(script: string): Logger {
  const tag = (m: string) => `[${script}] ${m}`;
  return {
    info: (m) => core.info(tag(m)),
    warning: (m) => core.warning(tag(m)),
    error: (m) => core.error(tag(m)),
    debug: (m) => core.debug(tag(m)),
  };
}

/**
 * Several scripts in one step. One after another by default (the runners of one script would
 * compete with another's for the machine or the cluster and skew both results); with the
 * `parallel` input all at once, each its own distributed test (its lines in the log start with
 * `[script]`). Each script gets its own run id, result file ({@link scriptResultPath}), HTML report
 * and verdict; a script that fails does not stop the others; a cancelled workflow stops them all
 * (one after another: the next ones do not start; in parallel: every running test stops and is
 * reported `error`). Outputs: `verdict` (failed when any script did not pass), `results` (JSON
 * array of {@link ScriptOutcome}); the single-script metric outputs stay empty.
 */
async function runScripts(
  inputs: RunActionInputs,
  scripts: string[],
  signal: AbortSignal,
  jobSummary: boolean,
  runIds: string[],
): Promise<RunStepOutcome> {
  const runScript = async (script: string, index: number): Promise<ScriptRun> => {
    const resultPath = scriptResultPath(inputs.config.resultPath, script);
    core.info(`script ${index + 1} of ${scripts.length}: ${script} (result ${resultPath})`);
    const log = inputs.parallel ? scriptLogger(script) : actionLog;
    try {
      const result = await runOne(inputs, { ...inputs.config, script, resultPath }, signal, runIds, log);
      await writeHtmlNextTo(resultPath, {
        result,
        ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}),
      });
      return { script, resultPath, result };
    } catch (error) {
      return { script, resultPath, error: errorMessage(error) };
    }
  };
  const runs: ScriptRun[] = [];
  if (inputs.parallel) {
    core.info(`${scripts.length} scripts at once (parallel: true): they share the machine or the cluster`);
    runs.push(...(await Promise.all(scripts.map(runScript))));
  } else {
    for (const [index, script] of scripts.entries()) {
      if (signal.aborted) break;
      runs.push(await runScript(script, index));
    }
  }
  core.saveState(STATE.cleaned, 'true');
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
  const failed = outcomes.filter((o) => o.verdict !== 'passed');
  core.setOutput('verdict', failed.length === 0 && outcomes.length === scripts.length ? 'passed' : 'failed');
  core.setOutput('thresholds-ok', String(failed.length === 0));
  core.setOutput('results', JSON.stringify(outcomes));
  if (jobSummary) await writeSummary(summary);
  const cancelled = signal.aborted;
  if (cancelled)
    core.setFailed(
      `k6 distributed run interrupted: the workflow was cancelled; ${runs.length} of ${scripts.length} scripts started, every runner stopped`,
    );
  else if (failed.length > 0)
    core.setFailed(
      `k6 distributed run failed: ${failed.length} of ${scripts.length} scripts: ${failed.map((o) => `${o.script} (${o.failure})`).join('; ')}`,
    );
  return { runs, summary, cancelled };
}

/**
 * The main step. Never throws: failures end in `core.setFailed` with one line.
 * @param options.jobSummary whether to write the report to the job summary; default the
 *   `job-summary` input (the root action turns it off when its report step writes the summary).
 * @returns every script's run (one, or several), or undefined when no script produced a result
 *   for a reason that fails the step before or instead of a run (bad input, a run that crashed).
 */
export async function run(options: { jobSummary?: boolean } = {}): Promise<RunStepOutcome | undefined> {
  const controller = new AbortController();
  const onSignal = (signal: string) => {
    core.warning(`${signal} received (the workflow was cancelled): stopping every runner`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const runIds: string[] = [];
  try {
    const inputs = readRunInputs((name) => core.getInput(name));
    maskKubeconfig(inputs.kubeconfig);
    if (inputs.config.k6Binary) resolveK6Binary(inputs.config.k6Binary, process.env, 'k6-binary');
    const scripts = await expandScripts(inputs.config.script, process.cwd());
    if (scripts.length > 1)
      return await runScripts(
        inputs,
        scripts,
        controller.signal,
        options.jobSummary ?? inputs.jobSummary,
        runIds,
      );
    const config = { ...inputs.config, script: scripts[0]! };
    const result = await runOne(inputs, config, controller.signal, runIds);
    core.saveState(STATE.cleaned, 'true');
    const html = await writeHtmlNextTo(config.resultPath, {
      result,
      ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}),
    });
    setOutputs(result, config.resultPath, html);
    core.setOutput(
      'results',
      JSON.stringify([scriptOutcome(config.script, config.resultPath, result)] satisfies ScriptOutcome[]),
    );
    const summary = renderReport(result, summaryOptions(inputs));
    if (options.jobSummary ?? inputs.jobSummary) await core.summary.addRaw(summary).write();
    const failure = runFailure(result);
    if (failure) core.setFailed(failure);
    return {
      runs: [{ script: config.script, resultPath: config.resultPath, result }],
      summary,
      cancelled: controller.signal.aborted,
    };
  } catch (error) {
    core.saveState(STATE.cleaned, 'true');
    failStep(error, 'k6 distributed run failed');
    return undefined;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * The post step: after a cancelled or crashed main step, removes whatever of the step's runs (one
 * per script) is left on the cluster, by their run-id label. It does nothing when the main step cleaned up itself.
 */
export async function post(): Promise<void> {
  try {
    const runIds = core.getState(STATE.runId).split(',').filter(Boolean);
    if (runIds.length === 0 || core.getState(STATE.cleaned) === 'true') return;
    const inputs = readRunInputs((name) => core.getInput(name));
    const kc = kubeConfigOf(inputs);
    const namespace = core.getState(STATE.namespace) || defaultNamespace(kc);
    const policy = (core.getState(STATE.cleanup) || 'always') as CleanupPolicy;
    for (const runId of runIds) {
      core.info(
        `post: the run ${runId} did not finish its cleanup; removing its runners from namespace ${namespace}`,
      );
      const left = await deleteRun(kc, namespace, runId, actionLog);
      if (left.length === 0)
        core.info(
          `post: removed every object of run ${runId} (cleanup policy ${policy} applies only to finished runs)`,
        );
    }
  } catch (error) {
    core.warning(`post: cleanup failed: ${errorMessage(error)}`);
  }
}
