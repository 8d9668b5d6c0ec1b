import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const STATE = path.join(ROOT, 'test/cluster/.state-e2e');

/**
 * The pod network (10.N, bridge k6brN) for this suite's cluster: $CLUSTER_POD_NET when set, the
 * one this state dir's cluster used before (start.sh stops that stale cluster and reuses it), else
 * the first 10.N from 10.214 whose bridge does not exist. Another checkout's cluster (a CI clone
 * next to a developer's tree), or a bridge left behind when a machine's session ended, then costs
 * another /16 instead of failing the suite. Throws when 10.214 to 10.254 are all taken.
 */
function podNet(): string {
  if (process.env.CLUSTER_POD_NET) return process.env.CLUSTER_POD_NET;
  const envFile = path.join(STATE, 'env');
  if (existsSync(envFile)) {
    const m = /^export CLUSTER_POD_NET='(10\.\d+)'$/m.exec(readFileSync(envFile, 'utf8'));
    if (m) return m[1]!;
  }
  for (let n = 214; n <= 254; n++) {
    if (!existsSync(`/sys/class/net/k6br${n}`)) return `10.${n}`;
  }
  throw new Error('no free pod network for the test cluster: bridges k6br214 to k6br254 all exist');
}

/**
 * Starts the test cluster (etcd, kube-apiserver, controller manager, scheduler, and 5 real nodes:
 * a kubelet and a containerd each, test/cluster/README.md) once for the cluster tests, building it
 * on first use, and stops it afterwards. Its env file is handed to the tests as environment.
 */
export default function setup(): () => void {
  const env = {
    ...process.env,
    CLUSTER_STATE_DIR: STATE,
    CLUSTER_POD_NET: podNet(),
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
