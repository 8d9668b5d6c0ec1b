import path from 'node:path';
import { apiError } from '../backends/kubernetes/api-errors.ts';
import { KubernetesBackend } from '../backends/kubernetes/backend.ts';
import { deleteRun, removeLeftoversOf } from '../backends/kubernetes/cleanup.ts';
import { checkDistinctZones, ZonedBackend, zoneError, zoneLogger } from '../backends/zones.ts';
import { kubernetesBackendOptions } from '../inputs/kubernetes.ts';
import type { ZoneInputs } from '../inputs/zones.ts';
import type { Logger } from '../log.ts';
import { newRunId } from '../run/plan.ts';
import { type KubernetesCliRun, loadCliCluster } from './kubernetes-run.ts';

// The CLI's part of a run with load zones (`--zones zones.yaml`), loaded with the Kubernetes client
// only when zones are given (src/cli/kubernetes.ts).

/** A zone's cluster, loaded. */
interface LoadedZone {
  zone: ZoneInputs;
  cluster: ReturnType<typeof loadCliCluster>;
}

/**
 * Loads every zone's credentials (a zone's kubeconfig file is read relative to the zones file's
 * folder) and namespace.
 * @param zonesFile the `--zones` file as given.
 * @throws ConfigurationError naming the zone: a kubeconfig file that is missing, an unknown
 *   context, or two zones with the same cluster (API server) and namespace, whose runners' names
 *   would collide.
 */
export function loadZones(zones: readonly ZoneInputs[], zonesFile: string): LoadedZone[] {
  const loaded = zones.map((zone) => {
    const label = `--zones: zone "${zone.name}"`;
    const inputs = { ...zone.kubernetes };
    if (inputs.kubeconfig && !path.isAbsolute(inputs.kubeconfig))
      inputs.kubeconfig = path.resolve(path.dirname(zonesFile), inputs.kubeconfig);
    const cluster = loadCliCluster(inputs, {
      kubeconfig: `${label}: kubeconfig`,
      context: `${label}: context`,
    });
    return { zone, cluster };
  });
  checkDistinctZones(
    loaded.map(({ zone, cluster }) => ({
      name: zone.name,
      server: cluster.kc.getCurrentCluster()?.server,
      namespace: cluster.namespace,
    })),
    '--zones',
  );
  return loaded;
}

/**
 * Prepares a run with load zones: one Kubernetes backend per zone, with one run id (the same
 * `k6-distributed.io/run-id` label in every cluster, so `cleanup --run-id` finds it in each).
 * @throws ConfigurationError naming the zone ({@link loadZones}).
 */
export function prepareZonedRun(
  zones: readonly ZoneInputs[],
  zonesFile: string,
  log: Logger,
  inputNames: { secretEnvInput: string; podPatchInput: string },
): KubernetesCliRun {
  const loaded = loadZones(zones, zonesFile);
  const runId = newRunId();
  const first = loaded[0]!.cluster;
  return {
    kc: first.kc,
    namespace: first.namespace,
    runId,
    where: loaded
      .map(({ zone, cluster }) => `zone "${zone.name}": namespace ${cluster.namespace}`)
      .join(', '),
    createBackend: () =>
      new ZonedBackend(
        loaded.map(({ zone, cluster }) => ({
          name: zone.name,
          backend: new KubernetesBackend({
            ...kubernetesBackendOptions(zone.kubernetes, {
              ...cluster,
              runId,
              log: zoneLogger(log, zone.name),
            }),
            ...inputNames,
          }),
        })),
        log,
      ),
    deleteNow: async () => {
      await Promise.allSettled(
        loaded.map(({ cluster }) => deleteRun(cluster.kc, cluster.namespace, runId, log, 0)),
      );
    },
  };
}

/**
 * Removes the ConfigMaps and Pods that `selector` matches in every zone's cluster and namespace
 * (the `cleanup` command with `--zones`).
 * @returns per zone, the objects removed and those still there after the wait.
 * @throws ConfigurationError naming the zone when its cluster cannot be used; a listing's error
 *   named by zone.
 */
export async function removeZonesLeftovers(
  zones: readonly ZoneInputs[],
  zonesFile: string,
  selector: string,
  what: string,
  log: Logger,
): Promise<Array<{ zone: string; removed: string[]; left: string[]; namespace: string }>> {
  const loaded = loadZones(zones, zonesFile);
  // Every zone, even when another's cluster cannot be reached: the first failure is thrown after.
  const settled = await Promise.allSettled(
    loaded.map(async ({ zone, cluster }) => {
      const { removed, left } = await removeLeftoversOf(cluster.kc, cluster.namespace, selector, log).catch(
        (error: unknown) => {
          throw zoneError(
            zone.name,
            apiError(error, `listing the objects of ${what} in namespace ${cluster.namespace}`),
          );
        },
      );
      return { zone: zone.name, removed, left, namespace: cluster.namespace };
    }),
  );
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map(
    (s) =>
      (s as PromiseFulfilledResult<{ zone: string; removed: string[]; left: string[]; namespace: string }>)
        .value,
  );
}
