import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/backends/kubernetes/names.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { runCli, startCli, writeScript } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';
import { leftovers } from './support/objects.ts';

// Load zones over two real clusters side by side on this machine: the suite's own (zone "east",
// 4 dedicated nodes) and a second one started here (zone "west", 2 dedicated nodes), each a control
// plane with real kubelets and containerd and its own 10.N pod network (test/cluster/README.md).
// The real CLI from source runs one test over both with `--zones`; each zone's Pods reach only
// their own cluster's network, so each zone has its own HTTP target on its cluster's gateway.

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const SECOND_STATE = path.join(ROOT, 'test/cluster/.state-zones');

/** The second cluster's env file, as start.sh writes it. */
let second: Record<string, string> = {};
const first = () => process.env as Record<string, string>;
const kcOf = (file: string) => {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
};
let east: { kc: KubeConfig; target: RecordingTarget };
let west: { kc: KubeConfig; target: RecordingTarget };

/** The first 10.N from 10.214 whose bridge does not exist (the suite's cluster has one). */
function freePodNet(): string {
  for (let n = 214; n <= 254; n++) if (!existsSync(`/sys/class/net/k6br${n}`)) return `10.${n}`;
  throw new Error('no free pod network for the second cluster');
}

function secondClusterEnv() {
  return {
    ...process.env,
    CLUSTER_STATE_DIR: SECOND_STATE,
    CLUSTER_POD_NET: second.CLUSTER_POD_NET ?? freePodNet(),
    DEDICATED_NODES: '2',
    GENERAL_NODES: '0',
    NODE_RUNTIME: 'kubelet',
  };
}

beforeAll(async () => {
  const env = secondClusterEnv();
  second = { CLUSTER_POD_NET: env.CLUSTER_POD_NET };
  execFileSync('bash', [path.join(ROOT, 'test/cluster/start.sh')], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (const line of readFileSync(path.join(SECOND_STATE, 'env'), 'utf8').split('\n')) {
    const m = /^export ([A-Z0-9_]+)='(.*)'$/.exec(line);
    if (m) second[m[1]!] = m[2]!;
  }
  east = { kc: kcOf(first().KUBECONFIG!), target: await startNodeTarget(first().K6D_POD_GATEWAY!) };
  west = { kc: kcOf(second.KUBECONFIG!), target: await startNodeTarget(second.K6D_POD_GATEWAY!) };
}, 300_000);
afterAll(async () => {
  await east?.target.stop();
  await west?.target.stop();
  execFileSync('bash', [path.join(ROOT, 'test/cluster/stop.sh')], {
    env: secondClusterEnv(),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
});
afterEach(async () => {
  expect(await leftovers(east.kc)).toEqual([]);
  expect(await leftovers(west.kc)).toEqual([]);
});

const DEDICATED = (pool = 'loadtest') => `
  node-selector: {k6-distributed.test/pool: ${pool}}
  tolerations: [{key: k6-distributed.test/dedicated, operator: Equal, value: loadtest, effect: NoSchedule}]`;

/**
 * A zones file: east 70% on 3 runners, west 30% on 2 (on the nodes of `westPool`); `westExtra`
 * lines go to west.
 */
function zonesFile(westExtra = '', westPool = 'loadtest'): string {
  return writeScript(
    `- name: east
  kubeconfig: ${first().KUBECONFIG}
  share: 70
  runners: 3${DEDICATED()}
  env: {TARGET: "${east.target.url}"}
- name: west
  kubeconfig: ${second.KUBECONFIG}
  share: 30
  runners: 2${DEDICATED(westPool)}
  env: {TARGET: "${west.target.url}"}${westExtra}
`,
    'zones.yaml',
  );
}

const SCRIPT = (iterations: number, thresholds = '{}') => `
import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 10, iterations: ${iterations} } },
  thresholds: ${thresholds},
};
export default function () { http.get(__ENV.TARGET + '/zones'); }
`;

/** The Pods of the run in a cluster, as listed now. */
async function podsOf(kc: KubeConfig, runId: string): Promise<V1Pod[]> {
  const list = await kc
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: 'default', labelSelector: `${LABELS.runId}=${runId}` });
  return list.items;
}

const arrivals = (target: RecordingTarget, from: number) =>
  target.arrivals.slice(from).filter((a) => a.path === '/zones').length;

describe('k6-distributed run --zones over two real clusters', () => {
  it('runs 70/30 over both as one test: the counts of a plain k6 run, each zone on its own nodes, one verdict', async () => {
    const script = writeScript(
      SCRIPT(
        500,
        `{ 'iterations{k6d_zone:east}': ['count==350'], 'iterations{k6d_zone:west}': ['count==150'] }`,
      ),
    );
    // One plain `k6 run` of the same script, here, against the east target (its thresholds name
    // our zone tag, which a plain run has not: not judged there).
    const plainFrom = east.target.arrivals.length;
    // Not execFileSync: the targets answer from this process's event loop.
    await execFileAsync(
      process.env.K6_BINARY!,
      ['run', '--quiet', '--summary-mode', 'disabled', '--no-thresholds', script],
      {
        env: { ...process.env, TARGET: east.target.url },
      },
    );
    const plain = arrivals(east.target, plainFrom);
    expect(plain).toBe(500);

    const eastFrom = east.target.arrivals.length;
    const westFrom = west.target.arrivals.length;
    const { child, done } = startCli(['run', script, '--backend', 'kubernetes', '--zones', zonesFile()], {
      env: { KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    await waitFor(() => /run (r[a-z0-9]+) in zone/.test(stderr), 'the run id', {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    const runId = /run (r[a-z0-9]+) in zone/.exec(stderr)![1]!;
    // Each zone's Pods as they ran (listed while the run goes on), by cluster.
    const seen = { east: new Map<string, V1Pod>(), west: new Map<string, V1Pod>() };
    const listing = setInterval(() => {
      for (const [zone, kc] of [
        ['east', east.kc],
        ['west', west.kc],
      ] as const)
        void podsOf(kc, runId).then(
          (pods) => {
            for (const p of pods) if (p.status?.hostIP) seen[zone].set(p.metadata!.name!, p);
          },
          () => {},
        );
    }, 200);
    const run = await done.finally(() => clearInterval(listing));
    expect(run.code, run.stderr).toBe(0);
    const result = run.result!;

    // The whole test, as one plain k6 run: 500 iterations, 350 of them in east, 150 in west.
    expect(arrivals(east.target, eastFrom) + arrivals(west.target, westFrom)).toBe(plain);
    expect(arrivals(east.target, eastFrom)).toBe(350);
    expect(arrivals(west.target, westFrom)).toBe(150);
    expect(result.metrics.iterations!.values.count).toBe(500);
    expect(result.verdict, result.failures.join('\n')).toBe('passed');

    // Each zone's runners on its own cluster's nodes (their node IPs are in its pod network).
    expect(seen.east.size).toBe(3);
    expect(seen.west.size).toBe(2);
    for (const p of seen.east.values())
      expect(p.status!.hostIP).toMatch(new RegExp(`^${first().CLUSTER_POD_NET}\\.0\\.`));
    for (const p of seen.west.values())
      expect(p.status!.hostIP).toMatch(new RegExp(`^${second.CLUSTER_POD_NET}\\.0\\.`));
    expect(result.runners.map((r) => r.zone)).toEqual(['east', 'east', 'east', 'west', 'west']);

    // Per-zone figures add up to the global ones.
    const [e, w] = result.zones!;
    expect([e!.name, e!.requests, w!.name, w!.requests]).toEqual(['east', 350, 'west', 150]);
    expect(e!.requests + w!.requests).toBe(result.metrics.http_reqs!.values.count);
    expect(e!.rps + w!.rps).toBeCloseTo(result.metrics.http_reqs!.values.rate!, 6);
    expect(e!.latencyMs!.max).toBeLessThanOrEqual(result.metrics.http_req_duration!.values.max!);

    // One start across both clusters: skew reported overall and per zone.
    console.log(
      `zones start skew: overall ${result.startSkewMs.toFixed(1)} ms; east ${e!.startSkewMs.toFixed(1)} ms, west ${w!.startSkewMs.toFixed(1)} ms (+${w!.startOffsetMs.toFixed(1)} ms)`,
    );
    // Each zone's clock is estimated from its own barrier lines (the least delay seen), so the skew
    // across zones carries the difference of those delays: 1.2, 3.0 and 40.7 ms measured here, and
    // 134.6 ms once with this 2-core machine saturated by two clusters (a warning said the zones'
    // clocks looked 249 ms apart). The target is 50 ms; the bound leaves room for a busy CI machine.
    expect(result.startSkewMs).toBeLessThan(150);
    expect(run.stdout).toContain('ZONES');
  });

  it('fails a zone whose runners cannot be scheduled, named by zone, and leaves nothing in either cluster', async () => {
    const script = writeScript(SCRIPT(50));
    const run = await runCli(
      ['run', script, '--backend', 'kubernetes', '--zones', zonesFile('\n  schedule-timeout: 5', 'nowhere')],
      { env: { KUBECONFIG: '/nonexistent/kubeconfig' } },
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/zone "west": .*(schedul|Unschedulable)/i);
  });

  it("stops both zones on Ctrl-C and removes every zone's objects", async () => {
    const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 5, duration: '60s' };
export default function () { http.get(__ENV.TARGET + '/zones'); sleep(0.2); }
`);
    const { child, done } = startCli(['run', script, '--backend', 'kubernetes', '--zones', zonesFile()], {
      env: { KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    await waitFor(() => stderr.includes('started 5 runners'), "'started 5 runners'", {
      timeoutMs: 90_000,
      intervalMs: 100,
    });
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).not.toBe(0);
    expect(run.result?.failureKinds).toContain('interrupted');
  });

  it("fails the run named by the zone whose API server stopped mid-test, keeps the other zone's data, and cleanup --zones removes the rest", async () => {
    const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 5, duration: '6s', gracefulStop: '0s' } } };
export default function () { http.get(__ENV.TARGET + '/zones'); sleep(0.2); }
`);
    const zones = zonesFile();
    const { child, done } = startCli(
      ['run', script, '--backend', 'kubernetes', '--zones', zones, '--grace', '5', '--cleanup', 'always'],
      { env: { KUBECONFIG: '/nonexistent/kubeconfig' } },
    );
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    await waitFor(() => stderr.includes('started 5 runners'), "'started 5 runners'", {
      timeoutMs: 90_000,
      intervalMs: 100,
    });
    const runId = /run (r[a-z0-9]+) in zone/.exec(stderr)![1]!;
    // The west cluster's API server stops answering (SIGSTOP: its connections hang, as a region
    // that became unreachable) for 100 s (past the run's deadline, the stop's wait and the kill's),
    // or until the run has ended.
    const apiserver = readFileSync(path.join(SECOND_STATE, 'pids'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('kube-apiserver '))!
      .split(' ')[1]!;
    process.kill(Number(apiserver), 'SIGSTOP');
    const stoppedAt = Date.now();
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 100_000))]);
    process.kill(Number(apiserver), 'SIGCONT');
    const run = await done;
    console.log(
      `the run ended ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after the API server stopped`,
    );
    console.log(`API server stopped: exit ${run.code}\n${run.stderr.split('\n').slice(-15).join('\n')}`);
    expect(run.code).not.toBe(0);
    expect(run.result!.failures.join('\n')).toMatch(/^zone "west": .*runner 3.*(runner )?4/m);
    expect(run.result!.failures.join('\n')).not.toMatch(/zone "east"/);
    const east = run.result!.zones!.find((z) => z.name === 'east')!;
    expect(east.requests).toBeGreaterThan(0);
    expect(east.runnersOk).toBe(3);
    // What the stopped zone could not remove, `cleanup --zones` removes once it answers again.
    const cleanup = await runCli(['cleanup', '--run-id', runId, '--zones', zones], {
      env: { KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    expect(cleanup.code, cleanup.stderr).toBe(0);
  }, 300_000);

  it('refuses a zone whose credentials lack permissions before anything is created in any zone', async () => {
    const zones = writeScript(
      `- {name: east, kubeconfig: ${first().KUBECONFIG}, share: 70, runners: 1}
- {name: west, kubeconfig: ${second.K6D_LIMITED_KUBECONFIG}, share: 30, runners: 1}
`,
      'zones.yaml',
    );
    const run = await runCli(['run', writeScript(SCRIPT(10)), '--backend', 'kubernetes', '--zones', zones], {
      env: { KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /error: zone "west": permissions: the credentials lack in namespace default: create configmaps/,
    );
    expect(run.stderr).not.toContain('created ConfigMap');
  });

  it('refuses an unknown context before anything is created, naming the zone', async () => {
    const zones = writeScript(
      `- {name: east, kubeconfig: ${first().KUBECONFIG}, share: 70, runners: 1}
- {name: west, kubeconfig: ${second.KUBECONFIG}, context: nowhere, share: 30, runners: 1}
`,
      'zones.yaml',
    );
    const run = await runCli(['run', writeScript(SCRIPT(10)), '--backend', 'kubernetes', '--zones', zones], {
      env: { KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/--zones: zone "west": context: "nowhere" is not in /);
  });
});
