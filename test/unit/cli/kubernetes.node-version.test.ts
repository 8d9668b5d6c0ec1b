import { describe, expect, it } from 'vitest';
import { KUBERNETES_MIN_NODE, kubernetesNodeProblem } from '../../../src/cli/kubernetes.ts';

// The CLI runs on Node 20; its Kubernetes client (undici 8) loads only on Node 22.19 or newer, so
// `--backend kubernetes` on an older Node is refused in one line before the client is loaded.
describe('the Node a Kubernetes run needs', () => {
  it.each(['22.19.0', '22.20.1', '23.0.0', '24.21.0', '26.1.0'])('Node %s runs it', (version) => {
    expect(kubernetesNodeProblem(version)).toBeUndefined();
  });

  it.each(['20.20.2', '22.12.0', '22.18.9', '21.7.3'])('Node %s is refused in one line', (version) => {
    const problem = kubernetesNodeProblem(version);
    expect(problem).toBe(
      `--backend kubernetes: Node ${version} is running this, but the Kubernetes backend needs Node 22.19 or newer ` +
        '(its client, @kubernetes/client-node 2.x, needs it); install a newer Node, or use --backend local, which runs on Node 20',
    );
  });

  it('is the Node this repository runs on or older', () => {
    expect(kubernetesNodeProblem(process.versions.node)).toBeUndefined();
    expect(KUBERNETES_MIN_NODE).toBe('22.19.0');
  });
});
