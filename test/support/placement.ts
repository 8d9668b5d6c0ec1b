import type { KubernetesBackendOptions } from '../../src/backends/kubernetes/options.ts';

/**
 * The test cluster's dedicated runner nodes (test/cluster/README.md): the node selector of their
 * pool, a toleration of their taint, and one runner per node. For tests and benchmarks that build
 * the Kubernetes backend directly.
 */
export const DEDICATED_PLACEMENT: KubernetesBackendOptions['placement'] = {
  nodeSelector: { 'k6-distributed.test/pool': 'loadtest' },
  tolerations: [
    { key: 'k6-distributed.test/dedicated', operator: 'Equal', value: 'loadtest', effect: 'NoSchedule' },
  ],
  spread: 'one-per-node',
};
