import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { LABELS } from '../../../src/backends/kubernetes/names.ts';

/**
 * Every ConfigMap and Pod of k6-distributed in `namespace` (of the run `runId` when given),
 * as `Kind name`, read with `kc` directly (a test's own view of what a run left behind).
 */
export async function leftovers(kc: KubeConfig, namespace = 'default', runId?: string): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const labelSelector = runId ? `${LABELS.runId}=${runId}` : `${LABELS.managedBy}=k6-distributed`;
  const [cms, pods] = await Promise.all([
    core.listNamespacedConfigMap({ namespace, labelSelector }),
    core.listNamespacedPod({ namespace, labelSelector }),
  ]);
  return [
    ...cms.items.map((o) => `ConfigMap ${o.metadata?.name}`),
    ...pods.items.map((o) => `Pod ${o.metadata?.name}`),
  ];
}
