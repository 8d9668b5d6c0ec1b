import { randomBytes } from 'node:crypto';
import * as core from '@actions/core';
import type { Backend } from '../../backends/backend.ts';
import { type CleanupPolicy, deleteRun, KubernetesBackend } from '../../backends/kubernetes/backend.ts';
import { defaultNamespace, loadKubeConfig } from '../../backends/kubernetes/kubeconfig.ts';
import { LocalBackend } from '../../backends/local/backend.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { renderReport } from '../../render/markdown.ts';
import type { RunResult } from '../../result/result.ts';
import { runTest } from '../../run/index.ts';
import { runFailure } from '../common/failure.ts';
import { failStep } from '../common/step.ts';
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

/** A run id: lowercase, starts with a letter, unique enough for names and labels. */
export function newRunId(): string {
  return `r${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/**
 * Masks the credentials of the kubeconfig input in the log: the whole input when it is one line
 * (base64), and each secret value of the YAML (tokens, keys, certificates, passwords). GitHub masks
 * line by line, so a multi-line value is never registered whole.
 */
function maskKubeconfig(kubeconfig: string | undefined): void {
  if (!kubeconfig) return;
  const trimmed = kubeconfig.trim();
  if (!trimmed.includes('\n')) core.setSecret(trimmed);
  const yaml = /^[A-Za-z0-9+/=]+$/.test(trimmed)
    ? Buffer.from(trimmed, 'base64').toString('utf8')
    : kubeconfig;
  for (const line of yaml.split('\n')) {
    const m =
      /^\s*-?\s*(token|client-key-data|client-certificate-data|password|id-token|refresh-token|client-secret)\s*:\s*(\S+)/.exec(
        line,
      );
    if (m?.[2]) core.setSecret(m[2].replace(/^["']|["']$/g, ''));
  }
}

/** The cluster credentials the inputs name (see loadKubeConfig for the order of sources). */
function kubeConfigOf(inputs: RunActionInputs) {
  return loadKubeConfig({
    ...(inputs.kubeconfig ? { kubeconfig: inputs.kubeconfig } : {}),
    ...(inputs.context ? { context: inputs.context } : {}),
  });
}

function makeBackend(inputs: RunActionInputs, runId: string): (k6: string, workDir: string) => Backend {
  if (inputs.backend === 'local') return (k6, workDir) => new LocalBackend(k6, workDir);
  const kc = kubeConfigOf(inputs);
  const namespace = inputs.namespace ?? defaultNamespace(kc);
  core.saveState(STATE.runId, runId);
  core.saveState(STATE.namespace, namespace);
  core.saveState(STATE.cleanup, inputs.cleanup);
  return () =>
    new KubernetesBackend({
      kc,
      namespace,
      runId,
      image: inputs.image,
      placement: {
        nodeSelector: inputs.nodeSelector,
        tolerations: inputs.tolerations,
        spread: inputs.spread,
      },
      ...(inputs.resources ? { resources: inputs.resources } : {}),
      env: inputs.env,
      labels: inputs.labels,
      sysctls: inputs.sysctls,
      cleanup: inputs.cleanup,
      scheduleTimeoutS: inputs.scheduleTimeoutS,
      activeDeadlineSeconds: 24 * 3600,
      log: actionLog,
    });
}

/** Sets the outputs from the result. Units: rps req/s, p95/p99/start-skew ms, error-rate a fraction. */
export function setOutputs(result: RunResult, resultPath: string): void {
  const duration =
    result.metrics['http_req_duration{expected_response:true}'] ?? result.metrics.http_req_duration;
  core.setOutput('verdict', result.verdict);
  core.setOutput('thresholds-ok', String(result.thresholdsOk));
  core.setOutput('result-path', resultPath);
  core.setOutput('rps', String(result.metrics.http_reqs?.values.rate ?? 0));
  core.setOutput('p95', String(duration?.values['p(95)'] ?? 0));
  core.setOutput('p99', String(duration?.values['p(99)'] ?? 0));
  core.setOutput('error-rate', String(result.metrics.http_req_failed?.values.rate ?? 0));
  core.setOutput('start-skew', String(result.startSkewMs));
}

/**
 * The main step. Never throws: failures end in `core.setFailed` with one line.
 * @param options.jobSummary whether to write the report to the job summary; default the
 *   `job-summary` input (the root action turns it off when its report step writes the summary).
 * @returns the global result when the run produced one (passed or failed), else undefined.
 */
export async function run(options: { jobSummary?: boolean } = {}): Promise<RunResult | undefined> {
  const controller = new AbortController();
  const onSignal = (signal: string) => {
    core.warning(`${signal} received (the workflow was cancelled): stopping every runner`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const inputs = readRunInputs((name) => core.getInput(name));
    maskKubeconfig(inputs.kubeconfig);
    const runId = newRunId();
    const result = await runTest(inputs.config, {
      createBackend: makeBackend(inputs, runId),
      log: actionLog,
      signal: controller.signal,
      environment: {
        ...(inputs.backend === 'kubernetes'
          ? { runnerImage: inputs.image, nodeSelector: inputs.nodeSelector }
          : {}),
        ...(inputs.resources ? { resources: { ...inputs.resources } } : {}),
      },
    });
    core.saveState(STATE.cleaned, 'true');
    setOutputs(result, inputs.config.resultPath);
    if (options.jobSummary ?? inputs.jobSummary) await core.summary.addRaw(renderReport(result)).write();
    const failure = runFailure(result);
    if (failure) core.setFailed(failure);
    return result;
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
 * The post step: after a cancelled or crashed main step, removes whatever of the run is left on
 * the cluster (by its run-id label). It does nothing when the main step cleaned up itself.
 */
export async function post(): Promise<void> {
  try {
    const runId = core.getState(STATE.runId);
    if (!runId || core.getState(STATE.cleaned) === 'true') return;
    const inputs = readRunInputs((name) => core.getInput(name));
    const kc = kubeConfigOf(inputs);
    const namespace = core.getState(STATE.namespace) || defaultNamespace(kc);
    const policy = (core.getState(STATE.cleanup) || 'always') as CleanupPolicy;
    core.info(
      `post: the run ${runId} did not finish its cleanup; removing its runners from namespace ${namespace}`,
    );
    const left = await deleteRun(kc, namespace, runId, actionLog);
    if (left.length === 0)
      core.info(
        `post: removed every object of run ${runId} (cleanup policy ${policy} applies only to finished runs)`,
      );
  } catch (error) {
    core.warning(`post: cleanup failed: ${errorMessage(error)}`);
  }
}
