import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { type Clock, realClock } from '../../clock.ts';
import type { Logger } from '../../log.ts';
import { API_CONCURRENCY, closePooledConnections, eachLimited, makeClient, retrying } from './api-client.ts';
import { apiErrorMessage, apiStatus } from './api-errors.ts';
import { runSelector } from './names.ts';
import type { CleanupPolicy } from './options.ts';

/** The API calls the cleanup makes. */
export type CleanupApi = Pick<
  CoreV1Api,
  'listNamespacedConfigMap' | 'deleteNamespacedConfigMap' | 'listNamespacedPod' | 'deleteNamespacedPod'
>;

/** What {@link cleanUpRun} needs. */
export interface CleanupDeps {
  api: CleanupApi;
  clock: Clock;
  namespace: string;
  runId: string;
  policy: CleanupPolicy;
  log: Pick<Logger, 'info' | 'warning'>;
  /** The runners' newest Pod objects, by index. */
  pods: ReadonlyMap<number, V1Pod>;
  /** Whether runner `index`'s exit is known. */
  exited(index: number): boolean;
  /** Whether every runner ended on its own with a completed exit code. */
  allCompleted: boolean;
  /** Stops what runs in the background first: the Pod watch, the log follows, the pod proxy's connections. */
  stop(): void;
  /** Closes the API client's pooled connections, last (api-client.ts `closePooledConnections`). */
  closeConnections(): void;
}

/**
 * Whether a cleanup keeps the run's objects for inspection: always with `never`, with `on-success`
 * when some runner did not complete.
 */
export function keepsObjects(policy: CleanupPolicy, allCompleted: boolean): boolean {
  return policy === 'never' || (policy === 'on-success' && !allCompleted);
}

/**
 * The end of a run (Backend.cleanup), in this order: stops the background work, then either
 * deletes every object of the run ({@link deleteRunObjects}) or, when the policy keeps them
 * ({@link keepsObjects}), deletes only the Pods still running (never leave a runner running) and
 * logs the `kubectl` command that deletes the rest; closes the pooled API connections last.
 * A failed delete is a warning, never an error.
 */
export async function cleanUpRun(deps: CleanupDeps): Promise<void> {
  const { api, namespace, log, policy } = deps;
  deps.stop();
  if (keepsObjects(policy, deps.allCompleted)) {
    // A runner whose exit is known has ended, even while its Pod's phase still lags behind (the
    // kubelet reports Succeeded a moment after the containers end).
    const live = [...deps.pods.entries()]
      .filter(([index, p]) => !deps.exited(index) && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
      .map(([, p]) => p);
    await eachLimited(live, API_CONCURRENCY, async (pod) => {
      await retrying(() =>
        api.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }),
      ).catch((error: unknown) =>
        log.warning(`cleanup: deleting Pod ${pod.metadata?.name} failed: ${apiErrorMessage(error)}`),
      );
    });
    log.info(
      `cleanup ${policy}: kept the run's objects; delete them with: kubectl delete configmap,pod -n ${namespace} -l ${runSelector(deps.runId)}`,
    );
  } else await deleteRunObjects({ api, clock: deps.clock, namespace, runId: deps.runId, log, waitS: 60 });
  deps.closeConnections();
}

/**
 * Deletes every object of a run, by its run-id label: the ConfigMap (whose dependents the garbage
 * collector removes) and then the Pods directly too so nothing waits for the collector
 * (with no grace period: Pods listed again right after their deletes are normally gone), then waits
 * until no Pod of the run is left (at most `waitS` seconds, listing every 250 ms). Every request is retried while
 * the API server fails transiently; a list that keeps failing counts as objects left.
 * @returns the names of objects still present after the wait (empty when all are gone).
 */
export function deleteRun(
  kc: KubeConfig,
  namespace: string,
  runId: string,
  log: Pick<Logger, 'warning'>,
  waitS = 60,
): Promise<string[]> {
  return deleteRunObjects({ api: makeClient(kc, CoreV1Api), clock: realClock, namespace, runId, log, waitS });
}

/** {@link deleteRun} with the API client and the clock given. */
export function deleteRunObjects(run: {
  api: CleanupApi;
  clock: Clock;
  namespace: string;
  runId: string;
  log: Pick<Logger, 'warning'>;
  /** The longest wait for the Pods to go, in s. */
  waitS: number;
}): Promise<string[]> {
  return deleteObjects({ ...run, labelSelector: runSelector(run.runId), subject: `run ${run.runId}` });
}

/** What {@link deleteObjects} and {@link removeLeftovers} act on. */
export interface LabelledObjects {
  api: CleanupApi;
  clock: Clock;
  namespace: string;
  /** The label selector of the objects, e.g. `k6-distributed.io/run-id=r1` (names.ts `runSelector`). */
  labelSelector: string;
  log: Pick<Logger, 'warning'>;
  /** The longest wait for the Pods to go, in s. */
  waitS: number;
}

/**
 * {@link deleteRunObjects} for the ConfigMaps and Pods `labelSelector` selects.
 * @param subject what they are, for the warnings (`run r1`).
 */
async function deleteObjects(run: LabelledObjects & { subject: string }): Promise<string[]> {
  const { api, clock, namespace, labelSelector, subject, log, waitS } = run;
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await retrying(fn);
    } catch (error) {
      if (apiStatus(error) !== 404)
        log.warning(`cleanup: deleting ${what} failed: ${apiErrorMessage(error)}`);
    }
  };
  /** The objects of one kind; `undefined` (with a warning) when they cannot be listed. */
  const list = async <T>(what: string, fn: () => Promise<{ items: T[] }>): Promise<T[] | undefined> => {
    try {
      return (await retrying(fn)).items;
    } catch (error) {
      log.warning(`cleanup: listing the ${what} of ${subject} failed: ${apiErrorMessage(error)}`);
      return undefined;
    }
  };
  // The ConfigMaps first: meanwhile the nodes remove the Pods that already ended (the deletes that
  // ended their linger), so the Pods' list that follows usually finds none left to delete.
  const configMaps = await list('ConfigMaps', () =>
    api.listNamespacedConfigMap({ namespace, labelSelector }),
  );
  await eachLimited(configMaps ?? [], API_CONCURRENCY, (cm) =>
    attempt(`ConfigMap ${cm.metadata?.name}`, () =>
      api.deleteNamespacedConfigMap({ name: cm.metadata!.name!, namespace, propagationPolicy: 'Background' }),
    ),
  );
  const deadline = clock.now() + waitS * 1000;
  // Pods already terminating are deleted too, at once: one on a node that is gone never ends by itself.
  const deleted = new Set<string>();
  for (;;) {
    const pods = await list('Pods', () => api.listNamespacedPod({ namespace, labelSelector }));
    const toDelete = (pods ?? []).filter((p) => !deleted.has(p.metadata?.uid ?? ''));
    await eachLimited(toDelete, API_CONCURRENCY, async (pod) => {
      deleted.add(pod.metadata?.uid ?? '');
      await attempt(`Pod ${pod.metadata?.name}`, () =>
        api.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }),
      );
    });
    // Deleted just now with no grace period: they are gone unless something holds them (a
    // finalizer), which the next list shows at once, without the wait.
    if (toDelete.length > 0 && clock.now() <= deadline) continue;
    const left = [
      ...(configMaps ? [] : [`the ConfigMaps of ${subject} (unlisted)`]),
      ...(pods ? pods.map((p) => `Pod ${p.metadata?.name}`) : [`the Pods of ${subject} (unlisted)`]),
    ];
    if (left.length === 0 || clock.now() > deadline) {
      if (left.length > 0) log.warning(`cleanup: still present after ${waitS} s: ${left.join(', ')}`);
      return left;
    }
    await clock.sleep(250);
  }
}

/**
 * Removes what dead runs left (the CLI's `cleanup` command): the ConfigMaps and Pods
 * `labelSelector` selects, listed first so that every one is named, then deleted as a run's
 * ({@link deleteRunObjects}: the ConfigMaps, which own their Pods, and the Pods themselves, with no
 * grace period), waiting at most `waitS` for the Pods to go.
 * @returns `removed`: `ConfigMap NAME` and `Pod NAME` of each object that was there and is gone;
 *   `left`: those still present after the wait. Both empty when nothing was there.
 * @throws the API error of the first listing (retried while transient) that failed.
 */
export async function removeLeftovers(
  objects: LabelledObjects,
): Promise<{ removed: string[]; left: string[] }> {
  const { api, namespace, labelSelector } = objects;
  const [configMaps, pods] = await Promise.all([
    retrying(() => api.listNamespacedConfigMap({ namespace, labelSelector })),
    retrying(() => api.listNamespacedPod({ namespace, labelSelector })),
  ]);
  const present = [
    ...configMaps.items.map((cm) => `ConfigMap ${cm.metadata?.name}`),
    ...pods.items.map((pod) => `Pod ${pod.metadata?.name}`),
  ];
  if (present.length === 0) return { removed: [], left: [] };
  const left = await deleteObjects({ ...objects, subject: `${labelSelector} in namespace ${namespace}` });
  return { removed: present.filter((name) => !left.includes(name)), left };
}

/**
 * {@link removeLeftovers} through `kc`'s API server on the real clock, waiting at most 60 s for the
 * Pods to go; its pooled connections are closed after, so nothing keeps the process alive.
 */
export async function removeLeftoversOf(
  kc: KubeConfig,
  namespace: string,
  labelSelector: string,
  log: Pick<Logger, 'warning'>,
): Promise<{ removed: string[]; left: string[] }> {
  try {
    const api = makeClient(kc, CoreV1Api);
    return await removeLeftovers({ api, clock: realClock, namespace, labelSelector, log, waitS: 60 });
  } finally {
    closePooledConnections(kc);
  }
}
