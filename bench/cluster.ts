/**
 * Benchmarks of the Kubernetes backend on the test control plane (test/cluster: a real
 * kube-apiserver, controller manager and scheduler; a node agent runs the Pods as processes).
 * For 4 and 8 runners it measures the start skew, the orchestration overhead (wall time minus the
 * test's own duration minus the time for Pods to start and initialise), and the API requests the
 * run costs per runner (the API server's `apiserver_request_total`, less the same time idle).
 * Writes bench/results/cluster.json and bench/results/cluster.md.
 *
 *   npm run bench:cluster
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesBackend } from '../src/backends/kubernetes/backend.ts';
import { parseRunConfig } from '../src/config.ts';
import { startNodeTarget } from '../src/demo/target.ts';
import type { Logger } from '../src/log.ts';
import { runTest } from '../src/run/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const STATE = path.join(ROOT, 'test/cluster/.state-bench');
const RESULTS = path.join(ROOT, 'bench', 'results');
const NODES = 8;
const ROUNDS = 3;

/** Sum of `apiserver_request_total`, overall and by resource[/subresource]. */
async function requestCounts(kc: KubeConfig): Promise<{ total: number; byResource: Record<string, number> }> {
  const options: https.RequestOptions = { method: 'GET' };
  await kc.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    https
      .get(`${kc.getCurrentCluster()!.server}/metrics`, options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
  let total = 0;
  const byResource: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    const sub = /subresource="([^"]*)"/.exec(line)?.[1] ?? '';
    const key = sub ? `${resource}/${sub}` : resource || '(none)';
    total += value;
    byResource[key] = (byResource[key] ?? 0) + value;
  }
  return { total, byResource };
}

function diff(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) out[k] = (b[k] ?? 0) - (a[k] ?? 0);
  return out;
}

function median(values: number[]): number {
  const s = [...values].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main() {
  const env = {
    ...process.env,
    CLUSTER_STATE_DIR: STATE,
    CLUSTER_POD_NET: '10.215',
    DEDICATED_NODES: String(NODES),
    GENERAL_NODES: '1',
  };
  execFileSync('bash', [path.join(ROOT, 'test/cluster/start.sh')], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const kc = new KubeConfig();
  kc.loadFromFile(path.join(STATE, 'kubeconfig'));
  const gateway = /K6D_POD_GATEWAY='([^']+)'/.exec(await readFile(path.join(STATE, 'env'), 'utf8'))![1]!;
  const target = await startNodeTarget(gateway);
  const dir = path.join(os.tmpdir(), `k6d-bench-cluster-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const script = path.join(dir, 'script.js');
  await writeFile(
    script,
    `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 16, duration: '5s' } } };
export default function () { http.get(__ENV.TARGET + '/api/items'); sleep(0.05); }
`,
  );
  const rows = [];
  try {
    for (const runners of [4, 8]) {
      const rounds = [];
      for (let round = 0; round < ROUNDS; round++) {
        let createdAt = 0;
        let readyAt = 0;
        const log: Logger = {
          info: (m) => {
            if (m.startsWith('created ConfigMap')) createdAt = performance.now();
            if (m.startsWith('all ') && m.includes('ready')) readyAt = performance.now();
          },
          warning: (m) => console.error(`  warning: ${m}`),
          error: (m) => console.error(`  error: ${m}`),
          debug: () => {},
        };
        const before = await requestCounts(kc);
        const t0 = performance.now();
        const result = await runTest(
          parseRunConfig({
            script,
            runners,
            k6Args: ['-e', `TARGET=${target.url}`],
            resultPath: path.join(dir, 'result.json'),
          }),
          {
            log,
            createBackend: () =>
              new KubernetesBackend({
                kc,
                namespace: 'default',
                runId: `b${Date.now().toString(36)}`,
                image: 'grafana/k6:2.2.0',
                placement: {
                  nodeSelector: { 'k6-distributed.test/pool': 'loadtest' },
                  tolerations: [
                    {
                      key: 'k6-distributed.test/dedicated',
                      operator: 'Equal',
                      value: 'loadtest',
                      effect: 'NoSchedule',
                    },
                  ],
                  spread: 'one-per-node',
                },
                cleanup: 'always',
                scheduleTimeoutS: 60,
                activeDeadlineSeconds: 600,
                log,
              }),
          },
        );
        const wallS = (performance.now() - t0) / 1000;
        const after = await requestCounts(kc);
        // The same time idle: what the controllers and node heartbeats cost without a run.
        await new Promise((r) => setTimeout(r, wallS * 1000));
        const idle = await requestCounts(kc);
        const run = diff(before.byResource, after.byResource);
        const quiet = diff(after.byResource, idle.byResource);
        const net = Object.fromEntries(
          Object.entries(diff(quiet, run))
            .filter(([, v]) => Math.abs(v) >= 1)
            .sort((a, b) => b[1] - a[1]),
        );
        const podStartS = (readyAt - createdAt) / 1000;
        rounds.push({
          verdict: result.verdict,
          wallS,
          testS: result.durationS,
          podStartS,
          overheadS: wallS - result.durationS - podStartS,
          skewMs: result.startSkewMs,
          requests: after.total - before.total - (idle.total - after.total),
          byResource: net,
        });
        console.error(
          `runners=${runners} round=${round + 1}: wall ${wallS.toFixed(1)} s, skew ${result.startSkewMs.toFixed(2)} ms`,
        );
      }
      rows.push({
        runners,
        rounds,
        skewMs: median(rounds.map((r) => r.skewMs)),
        podStartS: median(rounds.map((r) => r.podStartS)),
        overheadS: median(rounds.map((r) => r.overheadS)),
        wallS: median(rounds.map((r) => r.wallS)),
        testS: median(rounds.map((r) => r.testS)),
        requestsPerRunner: median(rounds.map((r) => r.requests / runners)),
      });
    }
  } finally {
    await target.stop();
    await rm(dir, { recursive: true, force: true });
    execFileSync('bash', [path.join(ROOT, 'test/cluster/stop.sh')], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const md = [
    `# Kubernetes backend on the test control plane (${new Date().toISOString()}, ${os.availableParallelism()} cores, ${ROUNDS} rounds, medians)`,
    '',
    '5 s constant-vus test, 16 VUs in all, one runner per dedicated node, cleanup always.',
    '',
    '| Runners | Start skew | Pod start + VU init | Test | Orchestration overhead | Wall | API requests per runner |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.runners} | ${r.skewMs.toFixed(2)} ms | ${r.podStartS.toFixed(2)} s | ${r.testS.toFixed(2)} s | ${r.overheadS.toFixed(2)} s | ${r.wallS.toFixed(2)} s | ${r.requestsPerRunner.toFixed(0)} |`,
    ),
    '',
    'API requests by resource in the last round of each size (the run less the same time idle):',
    '',
    ...rows.map(
      (r) =>
        `- ${r.runners} runners: ${Object.entries(r.rounds.at(-1)!.byResource)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    ),
    '',
    'Overhead is the wall time of the whole run less the test itself and less the time from creating the',
    'Jobs to every runner at status 4: preflight (k6 archive + inspect), the permission check, collecting',
    'the summaries, aggregation and deleting the run. API requests count every client (this process, the',
    'controllers, the scheduler, the node agent), less what the same time costs idle.',
    '',
  ].join('\n');
  await mkdir(RESULTS, { recursive: true });
  await writeFile(
    path.join(RESULTS, 'cluster.json'),
    `${JSON.stringify({ at: new Date().toISOString(), rows }, null, 2)}\n`,
  );
  await writeFile(path.join(RESULTS, 'cluster.md'), md);
  console.log(md);
}

await main();
