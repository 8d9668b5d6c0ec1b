import { deleteRun } from '../../backends/kubernetes/cleanup.ts';
import { defaultNamespace } from '../../backends/kubernetes/kubeconfig.ts';
import type { CleanupPolicy } from '../../backends/kubernetes/options.ts';
import type { Logger } from '../../log.ts';
import { kubeConfigOf, zoneClusters } from './backend.ts';
import type { RunActionInputs } from './inputs.ts';
import { STATE, type StateName } from './outcome.ts';

/**
 * The post step's logic: after a cancelled or crashed main step, removes whatever of the step's
 * runs (one per script) is left on the cluster, by their run-id label.
 */

/** The cluster the inputs name, as the post step uses it. */
export interface Cluster {
  /** The namespace used when the main step saved none (the kubeconfig context's, or `default`). */
  defaultNamespace(): string;
  /** Deletes a run's objects; @returns the names of those still present after the wait. */
  deleteRun(namespace: string, runId: string, log: Logger): Promise<string[]>;
}

/** What {@link cleanupLeftovers} needs from outside. */
export interface CleanupDeps {
  log: Logger;
  /** Reads the main step's state (STATE_<name>); '' when it saved none. */
  getState(name: StateName): string;
  /** The action's inputs, read only when there is something to clean. */
  inputs(): RunActionInputs;
  /**
   * The cluster the inputs name.
   * @throws ConfigurationError when its credentials cannot be loaded.
   */
  cluster(inputs: RunActionInputs): Cluster;
}

/** The real cluster: the credentials the inputs name, and src/backends/kubernetes `deleteRun`. */
export function clusterOf(inputs: RunActionInputs): Cluster {
  if (inputs.zones) {
    // Every zone's cluster and namespace (the namespace saved is the first zone's).
    const zones = zoneClusters(inputs.zones);
    return {
      defaultNamespace: () => zones[0]!.namespace,
      deleteRun: async (_namespace, runId, log) => {
        const left = await Promise.all(
          zones.map(({ kc, namespace }) =>
            deleteRun(kc, namespace, runId, log).catch(() => [`(zone in ${namespace}: unreachable)`]),
          ),
        );
        return left.flat();
      },
    };
  }
  const kc = kubeConfigOf(inputs);
  return {
    defaultNamespace: () => defaultNamespace(kc),
    deleteRun: (namespace, runId, log) => deleteRun(kc, namespace, runId, log),
  };
}

/**
 * Removes the runners of every run id the main step saved, unless the main step cleaned up
 * itself (or started no Kubernetes run). The cleanup policy is only named: it applies to
 * finished runs, and these did not finish.
 * @throws what reading the inputs, loading the credentials or the API throws (the runner warns).
 */
export async function cleanupLeftovers(deps: CleanupDeps): Promise<void> {
  const runIds = deps.getState(STATE.runId).split(',').filter(Boolean);
  if (runIds.length === 0 || deps.getState(STATE.cleaned) === 'true') return;
  const cluster = deps.cluster(deps.inputs());
  const namespace = deps.getState(STATE.namespace) || cluster.defaultNamespace();
  const policy = (deps.getState(STATE.cleanup) || 'always') as CleanupPolicy;
  for (const runId of runIds) {
    deps.log.info(
      `post: the run ${runId} did not finish its cleanup; removing its runners from namespace ${namespace}`,
    );
    const left = await cluster.deleteRun(namespace, runId, deps.log);
    if (left.length === 0)
      deps.log.info(
        `post: removed every object of run ${runId} (cleanup policy ${policy} applies only to finished runs)`,
      );
  }
}
