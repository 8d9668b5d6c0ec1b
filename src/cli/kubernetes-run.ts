import { existsSync } from 'node:fs';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Backend } from '../backends/backend.ts';
import { apiError } from '../backends/kubernetes/api-errors.ts';
import { KubernetesBackend } from '../backends/kubernetes/backend.ts';
import { deleteRun, removeLeftoversOf } from '../backends/kubernetes/cleanup.ts';
import { defaultNamespace, loadKubeConfig } from '../backends/kubernetes/kubeconfig.ts';
import { ConfigurationError } from '../errors.ts';
import { type KubernetesInputs, kubernetesBackendOptions } from '../inputs/kubernetes.ts';
import type { Logger } from '../log.ts';
import { newRunId } from '../run/plan.ts';

// The CLI's part that loads @kubernetes/client-node: imported by kubernetesCliRun (kubernetes.ts)
// only for `--backend kubernetes`, and by the `cleanup` command, so it is a chunk of its own that `--help`, `demo` and local runs
// never load.

/** A Kubernetes run of the CLI: its credentials, namespace and run id, made before the preflight. */
export interface KubernetesCliRun {
  kc: KubeConfig;
  namespace: string;
  runId: string;
  /** The backend of the run (for `runTest`). */
  createBackend(): Backend;
  /** Where its objects go, for the user: `namespace NS`, or one `zone "eu": namespace NS` per zone. */
  where: string;
  /** Deletes every object of the run without waiting for its Pods to go (a second Ctrl-C). */
  deleteNow(): Promise<void>;
}

/**
 * Loads the credentials `--kubeconfig` and `--context` name (else `$KUBECONFIG`, `~/.kube/config`,
 * in-cluster) and the namespace: `--namespace`, else the context's, else `default`.
 * @throws ConfigurationError naming `--kubeconfig` or `--context` when they cannot be used.
 */
export function loadCliCluster(
  inputs: Pick<KubernetesInputs, 'kubeconfig' | 'context' | 'namespace'>,
  names = { kubeconfig: '--kubeconfig', context: '--context' },
): {
  kc: KubeConfig;
  namespace: string;
} {
  let env = process.env;
  if (inputs.kubeconfig) {
    const file = path.resolve(inputs.kubeconfig);
    if (!existsSync(file))
      throw new ConfigurationError(`${names.kubeconfig}: no file at ${inputs.kubeconfig}`);
    env = { ...process.env, KUBECONFIG: file };
  }
  const kc = loadKubeConfig({ ...(inputs.context ? { context: inputs.context } : {}), names }, env);
  return { kc, namespace: inputs.namespace ?? defaultNamespace(kc) };
}

/**
 * Loads the credentials the flags name ({@link loadCliCluster}) and prepares the run.
 * @param inputNames how the user names the secret-env and pod-patch inputs (`--secret-env`,
 *   `--pod-patch`), for the warning about `-e` values in the Pods' environment and the pod patch's
 *   errors.
 * @throws ConfigurationError naming `--kubeconfig` or `--context` when they cannot be used.
 */
export function prepareKubernetesRun(
  inputs: KubernetesInputs,
  log: Logger,
  inputNames: { secretEnvInput: string; podPatchInput: string },
): KubernetesCliRun {
  const { kc, namespace } = loadCliCluster(inputs);
  const runId = newRunId();
  return {
    kc,
    namespace,
    runId,
    where: `namespace ${namespace}`,
    createBackend: () =>
      new KubernetesBackend({
        ...kubernetesBackendOptions(inputs, { kc, namespace, runId, log }),
        ...inputNames,
      }),
    deleteNow: async () => {
      await deleteRun(kc, namespace, runId, log, 0);
    },
  };
}

/**
 * Removes the ConfigMaps and Pods that `selector` matches in the cluster and namespace the flags
 * name (the `cleanup` command's work, src/cli/cleanup.ts).
 * @returns the objects removed (`ConfigMap name`, `Pod name`) and those still there after the wait.
 * @throws ConfigurationError naming the flag when the cluster cannot be used, or the API's error
 *   classified (src/backends/kubernetes/api-errors.ts) when listing fails.
 */
export async function removeClusterLeftovers(
  inputs: Pick<KubernetesInputs, 'kubeconfig' | 'context' | 'namespace'>,
  selector: string,
  what: string,
  log: Logger,
): Promise<{ removed: string[]; left: string[]; namespace: string }> {
  const { kc, namespace } = loadCliCluster(inputs);
  const { removed, left } = await removeLeftoversOf(kc, namespace, selector, log).catch((error: unknown) => {
    throw apiError(error, `listing the objects of ${what} in namespace ${namespace}`);
  });
  return { removed, left, namespace };
}
