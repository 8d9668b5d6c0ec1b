import { existsSync } from 'node:fs';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubernetesBackend } from '../backends/kubernetes/backend.ts';
import { deleteRun } from '../backends/kubernetes/cleanup.ts';
import { defaultNamespace, loadKubeConfig } from '../backends/kubernetes/kubeconfig.ts';
import { ConfigurationError } from '../errors.ts';
import { type KubernetesInputs, kubernetesBackendOptions } from '../inputs/kubernetes.ts';
import type { Logger } from '../log.ts';
import { newRunId } from '../run/plan.ts';

// The CLI's part that loads @kubernetes/client-node: imported by kubernetesCliRun (kubernetes.ts)
// only for `--backend kubernetes`, so it is a chunk of its own that `--help`, `demo` and local runs
// never load.

/** A Kubernetes run of the CLI: its credentials, namespace and run id, made before the preflight. */
export interface KubernetesCliRun {
  kc: KubeConfig;
  namespace: string;
  runId: string;
  /** The backend of the run (for `runTest`). */
  createBackend(): KubernetesBackend;
  /** Deletes every object of the run without waiting for its Pods to go (a second Ctrl-C). */
  deleteNow(): Promise<void>;
}

/**
 * Loads the credentials the flags name and prepares the run.
 * @throws ConfigurationError naming `--kubeconfig` or `--context` when they cannot be used.
 */
export function prepareKubernetesRun(inputs: KubernetesInputs, log: Logger): KubernetesCliRun {
  const names = { kubeconfig: '--kubeconfig', context: '--context' };
  let env = process.env;
  if (inputs.kubeconfig) {
    const file = path.resolve(inputs.kubeconfig);
    if (!existsSync(file)) throw new ConfigurationError(`--kubeconfig: no file at ${inputs.kubeconfig}`);
    env = { ...process.env, KUBECONFIG: file };
  }
  const kc = loadKubeConfig({ ...(inputs.context ? { context: inputs.context } : {}), names }, env);
  const namespace = inputs.namespace ?? defaultNamespace(kc);
  const runId = newRunId();
  return {
    kc,
    namespace,
    runId,
    createBackend: () =>
      new KubernetesBackend(kubernetesBackendOptions(inputs, { kc, namespace, runId, log })),
    deleteNow: async () => {
      await deleteRun(kc, namespace, runId, log, 0);
    },
  };
}
