import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const STATE = path.join(ROOT, 'test/cluster/.state-e2e');

/**
 * Starts the test cluster (etcd, kube-apiserver, controller manager, scheduler, and 5 real nodes:
 * a kubelet and a containerd each, test/cluster/README.md) once for the cluster tests, building it
 * on first use, and stops it afterwards. Its env file is handed to the tests as environment.
 */
export default function setup(): () => void {
  const env = {
    ...process.env,
    CLUSTER_STATE_DIR: STATE,
    CLUSTER_POD_NET: '10.214',
    DEDICATED_NODES: '4',
    GENERAL_NODES: '1',
    NODE_RUNTIME: 'kubelet',
  };
  execFileSync('bash', [path.join(ROOT, 'test/cluster/start.sh')], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (const line of readFileSync(path.join(STATE, 'env'), 'utf8').split('\n')) {
    const m = /^export ([A-Z0-9_]+)='(.*)'$/.exec(line);
    if (m) process.env[m[1]!] = m[2]!;
  }
  return () => {
    execFileSync('bash', [path.join(ROOT, 'test/cluster/stop.sh')], {
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  };
}
