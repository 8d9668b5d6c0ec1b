/**
 * Benchmarks of the Kubernetes backend on the test cluster (test/cluster: a real kube-apiserver,
 * controller manager and scheduler). 4 and 16 runners run on real nodes (a kubelet and containerd
 * each, 16 nodes); 32 and 64 runners on the stand-in node agent (64 nodes: 64 real kubelets and
 * containerds do not fit in 2 cores next to 128 k6 processes). One more row: 4 runners on real
 * nodes whose VU init takes 30 s, to show the API requests do not grow with the wait.
 * Each row measures the start skew, Pod start + VU init (runner Pods created -> every runner at status 4),
 * the orchestration overhead (wall time minus the test's own duration minus Pod start + VU init),
 * and the API requests the run costs per runner (the API server's `apiserver_request_total`, from
 * every client, less the same time idle).
 * Writes bench/results/cluster.json and bench/results/cluster.md.
 *
 *   npm run bench:cluster            (ROUNDS=2 by default; ROUNDS=3 for steadier medians)
 *
 * COMPARE=<another checkout> measures a change against the code before it on the same cluster: the
 * rounds alternate between this checkout's orchestrator and that one's (its `src/`, with this
 * checkout's node_modules linked in), ROUNDS of each, so that both see the same drift of a noisy
 * machine; the medians of both are printed and written side by side (with RUNNERS, only printed).
 * PHASES=agent measures the stand-in nodes only and keeps the kubelet rows of the last results,
 * marked with their date. CLUSTER_POD_NET and CLUSTER_STATE_DIR choose the cluster's network and
 * state dir (default 10.215 and test/cluster/.state-bench); KEEP_CLUSTER=1 leaves it running.
 * REPORT_ONLY=1 only writes cluster.md again from cluster.json.
 */

import { execFileSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesBackend } from '../src/backends/kubernetes/backend.ts';
import { median } from '../src/compare/noise.ts';
import { parseRunConfig } from '../src/config.ts';
import type { Logger } from '../src/log.ts';
import { runTest } from '../src/run/index.ts';
import { DEDICATED_PLACEMENT } from '../test/support/placement.ts';
import { type ClusterRow, clusterMarkdown, STAGES } from './cluster-report.ts';
import { diff, requestCounts, startTargetProcess } from './cluster-support.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The cluster's state dir and pod network (CLUSTER_STATE_DIR, CLUSTER_POD_NET), so that several benches' clusters do not collide. */
const STATE = process.env.CLUSTER_STATE_DIR ?? path.join(ROOT, 'test/cluster/.state-bench');
const POD_NET = process.env.CLUSTER_POD_NET ?? '10.215';
const RESULTS = path.join(ROOT, 'bench', 'results');
const ROUNDS = Number(process.env.ROUNDS ?? 2);
/**
 * TRACE=32 (runner counts, comma-separated) runs only those cases and prints every log line of the
 * run with its time; the results files are then left as they are.
 */
const TRACE_RUNNERS = process.env.TRACE?.split(',').map(Number);
/** A trace line's time: s since this process began, and the wall clock's time of day (UTC, as the cluster's logs). */
const stamp = () => `${(performance.now() / 1000).toFixed(3)} s ${new Date().toISOString().slice(11, 23)}`;
/** The environment and command that ran this bench, for the results (the variables that change what it measures). */
const COMMAND = [
  ...['ROUNDS', 'PHASES', 'COMPARE', 'KCM_API_QPS', 'CLUSTER_POD_NET'].flatMap((k) =>
    process.env[k] ? [`${k}=${process.env[k]}`] : [],
  ),
  'npm run bench:cluster',
].join(' ');
/** RUNNERS=32 (runner counts, comma-separated) runs only those cases; the results files are then left as they are. */
const ONLY_RUNNERS = (process.env.RUNNERS ?? process.env.TRACE)?.split(',').map(Number);
/**
 * kube-controller-manager's --kube-api-qps on the test cluster (KCM_API_QPS, default 100; the
 * component's own default is 20). It mattered while runners were Jobs: at 20 a second the job
 * controller released the finished runner Pods (their job-tracking finalizer) one PATCH at a time,
 * and the cleanup waited 2.1 s for 32 runners instead of 0.3 s. Runners are bare Pods now, which
 * no controller of the controller-manager acts on during a run. Kept at 100 so that figures stay
 * comparable with the earlier ones.
 */
const KCM_QPS = process.env.KCM_API_QPS ?? '100';

/**
 * Requests this process sends to the API server, counted from Node's diagnostics channels: client-node
 * goes through undici (`undici:request:create`, its Pod watch included, one per watch), the pod proxy
 * and the log follows through `https` (`http.client.request.start`). `host` is the API server's
 * `host:port`; only requests to it count.
 */
const ownRequests = { host: '', count: 0 };
diagnostics.subscribe('undici:request:create', (message) => {
  const { request } = message as { request: { origin?: unknown } };
  if (ownRequests.host && String(request.origin).endsWith(`//${ownRequests.host}`)) ownRequests.count++;
});
diagnostics.subscribe('http.client.request.start', (message) => {
  const { request } = message as { request: { getHeader(name: string): unknown } };
  if (ownRequests.host && request.getHeader('host') === ownRequests.host) ownRequests.count++;
});

/** One cluster and the runs on it. */
interface Phase {
  runtime: 'kubelet' | 'agent';
  nodes: number;
  /**
   * `firstSleepS`: each VU sleeps that long before its first request, so that the runners' first
   * requests come after the CPU burst of every runner beginning its test at once (on this machine's
   * 2 cores): their spread then shows how far apart the runners began, less that contention.
   */
  cases: Array<{ runners: number; initS: number; rounds: number; firstSleepS?: number }>;
}
const PHASES: Phase[] = [
  {
    runtime: 'kubelet',
    nodes: 16,
    cases: [
      { runners: 4, initS: 0, rounds: ROUNDS },
      { runners: 16, initS: 0, rounds: ROUNDS },
      { runners: 4, initS: 30, rounds: 1 },
    ],
  },
  {
    runtime: 'agent',
    nodes: 64,
    cases: [
      { runners: 32, initS: 0, rounds: ROUNDS },
      { runners: 64, initS: 0, rounds: ROUNDS },
      { runners: 64, initS: 0, rounds: ROUNDS, firstSleepS: 1 },
    ],
  },
];

function scriptFor(runners: number, initS: number, firstSleepS = 0): string {
  return `import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
// VU init (not the options pass, VU 0) takes ${initS} s.
if (__VU > 0 && ${initS} > 0) sleep(${initS});
export const options = { scenarios: { s: { executor: 'constant-vus', vus: ${2 * runners}, duration: '5s' } } };
// Each request names its runner, so that the target tells when each runner's first one came, and
// each runner's first VU logs when its first iteration began (the nodes share this machine's clock).
const params = { headers: { 'x-runner': __ENV.K6D_RUNNER_INDEX } };
export default function () {
  if (exec.vu.idInInstance === 1 && exec.vu.iterationInInstance === 0) console.log('k6d-first-iteration ' + Date.now());
  if (${firstSleepS} > 0 && exec.vu.iterationInInstance === 0) sleep(${firstSleepS});
  http.get(__ENV.TARGET + '/api/items', params);
  sleep(0.05);
}
`;
}

/** One measured run. Units: s, ms for the skew. */
interface Round {
  /** Whose orchestrator ran it: `this` checkout, or COMPARE's folder name. */
  variant: string;
  verdict: string;
  failures: string[];
  wallS: number;
  testS: number;
  podStartS: number;
  overheadS: number;
  stagesS: Record<(typeof STAGES)[number], number>;
  skewMs: number;
  /** The spread of k6's answers to the runners' un-pause requests (by the nodes' clocks), in ms. */
  confirmedMs: number;
  /**
   * The spread of the runners' first requests at the target, in ms, by the target's one clock: how
   * far apart the runners really started (NaN when some runner's first request is missing).
   */
  firstRequestsMs: number;
  /**
   * The spread of the runners' first iterations, in ms, as each runner's first VU logged it when it
   * began (NaN when some runner's line is missing): how far apart the runners' tests began.
   */
  firstIterationsMs: number;
  requests: number;
  /** This machine's 1-minute load average at the end of the run. */
  loadAverage: number;
  /** The requests of this process alone (the orchestrator), over the run. */
  ownRequests: number;
  byResource: Record<string, number>;
}

/** The Kubernetes backend, timing its collection of summaries and its cleanup (wall s). */
function timed(Base: typeof KubernetesBackend) {
  return class TimedBackend extends Base {
    collectS = 0;
    cleanupS = 0;
    /** When the first runner's linger was ended, and when every runner had exited (performance.now() ms). */
    firstTerminateAt = 0;
    allExitedAt = 0;
    /** Per runner: when its first VU began its first iteration (epoch ms), from the line it logs. */
    readonly firstIterations = new Map<number, number>();
    private collectFrom = 0;
    private collectTo = 0;
    constructor(options: ConstructorParameters<typeof KubernetesBackend>[0]) {
      super(options);
      lastBackend = this;
    }
    override async launch(...args: Parameters<KubernetesBackend['launch']>) {
      const runners = await super.launch(...args);
      const trace = (m: string) => {
        if (TRACE_RUNNERS) console.error(`  ${stamp()} (backend) ${m}`);
      };
      let exitedCount = 0;
      for (const r of runners)
        void r.exited.then(() => {
          trace(`runner ${r.index} exited`);
          if (++exitedCount === runners.length) {
            this.allExitedAt = performance.now();
            trace(`all ${runners.length} runners exited`);
          }
        });
      let terminating = 0;
      return runners.map((r) => ({
        ...r,
        terminate: async () => {
          if (terminating++ === 0) {
            this.firstTerminateAt = performance.now();
            trace('first terminate (end of linger)');
          }
          await r.terminate();
          if (terminating === runners.length) trace('a last terminate returned');
        },
        collect: async () => {
          const from = performance.now();
          this.collectFrom = this.collectFrom ? Math.min(this.collectFrom, from) : from;
          try {
            const collected = await r.collect();
            const first = /k6d-first-iteration (\d+)/.exec(collected.logTail);
            if (first) this.firstIterations.set(r.index, Number(first[1]));
            return collected;
          } finally {
            this.collectTo = Math.max(this.collectTo, performance.now());
            this.collectS = (this.collectTo - this.collectFrom) / 1000;
          }
        },
      }));
    }
    override async cleanup() {
      const from = performance.now();
      if (TRACE_RUNNERS) console.error(`  ${stamp()} (backend) cleanup starts`);
      await super.cleanup();
      if (TRACE_RUNNERS) console.error(`  ${stamp()} (backend) cleanup done`);
      this.cleanupS += (performance.now() - from) / 1000;
    }
  };
}

type Timed = InstanceType<ReturnType<typeof timed>>;
/** The backend of the run under way. */
let lastBackend: Timed | undefined;

/** One orchestrator under measure: this checkout's, or COMPARE's. */
interface Variant {
  label: string;
  runTest: typeof runTest;
  parseRunConfig: typeof parseRunConfig;
  Backend: ReturnType<typeof timed>;
}

const variants: Variant[] = [{ label: 'this', runTest, parseRunConfig, Backend: timed(KubernetesBackend) }];
if (process.env.COMPARE) {
  const other = path.resolve(process.env.COMPARE);
  // Another checkout's modules, typed as this one's (the same API, other code).
  const load = async <T>(file: string) => (await import(path.join(other, file))) as T;
  variants.push({
    label: path.basename(other),
    runTest: (await load<{ runTest: typeof runTest }>('src/run/index.ts')).runTest,
    parseRunConfig: (await load<{ parseRunConfig: typeof parseRunConfig }>('src/config.ts')).parseRunConfig,
    Backend: timed(
      (await load<{ KubernetesBackend: typeof KubernetesBackend }>('src/backends/kubernetes/backend.ts'))
        .KubernetesBackend,
    ),
  });
}

async function runPhase(phase: Phase, dir: string) {
  const env = {
    ...process.env,
    CLUSTER_STATE_DIR: STATE,
    CLUSTER_POD_NET: POD_NET,
    DEDICATED_NODES: String(phase.nodes),
    GENERAL_NODES: '0',
    NODE_RUNTIME: phase.runtime,
    CLUSTER_START_TIMEOUT: '300',
    KCM_API_QPS: KCM_QPS,
  };
  execFileSync('bash', [path.join(ROOT, 'test/cluster/start.sh')], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const rows = [];
  const kc = new KubeConfig();
  kc.loadFromFile(path.join(STATE, 'kubeconfig'));
  const gateway = /K6D_POD_GATEWAY='([^']+)'/.exec(await readFile(path.join(STATE, 'env'), 'utf8'))![1]!;
  const target = await startTargetProcess(gateway);
  try {
    for (const { runners, initS, rounds: count, firstSleepS = 0 } of phase.cases) {
      if (ONLY_RUNNERS && !ONLY_RUNNERS.includes(runners)) continue;
      const script = path.join(dir, `script-${runners}-${initS}-${firstSleepS}.js`);
      await writeFile(script, scriptFor(runners, initS, firstSleepS));
      const rounds: Round[] = [];
      // Each variant runs `count` rounds, alternating.
      for (let round = 0; round < count * variants.length; round++) {
        let createdAt = 0;
        let startsAt = 0;
        let confirmedMs = Number.NaN;
        let readyAt = 0;
        let preflightAt = 0;
        let t0 = performance.now();
        const log: Logger = {
          info: (m) => {
            if (TRACE_RUNNERS) console.error(`  ${stamp()} ${m}`);
            if (m.startsWith('preflight ok')) preflightAt = performance.now();
            if (m.startsWith('created ConfigMap')) createdAt = performance.now();
            if (m.startsWith('all ') && m.includes('ready')) readyAt = performance.now();
            const confirmed = /k6 confirmed within (\d+) ms/.exec(m);
            if (confirmed) confirmedMs = Number(confirmed[1]);
          },
          warning: (m) => console.error(`  warning: ${m}`),
          error: (m) => console.error(`  error: ${m}`),
          debug: (m) => {
            // The scheduled start's instant: `starting N runners at ... (in L ms; ...`.
            const lead = /^starting \d+ runners at .* \(in (\d+) ms;/.exec(m);
            if (lead) startsAt = performance.now() + Number(lead[1]);
            if (TRACE_RUNNERS) console.error(`  ${stamp()} (debug) ${m}`);
          },
        };
        await target.firstArrivals();
        const before = await requestCounts(kc);
        ownRequests.host = new URL(kc.getCurrentCluster()!.server).host;
        const ownBefore = ownRequests.count;
        t0 = performance.now();
        const variant = variants[round % variants.length]!;
        const result = await variant.runTest(
          variant.parseRunConfig({
            script,
            runners,
            k6Args: ['-e', `TARGET=${target.url}`],
            resultPath: path.join(dir, 'result.json'),
          }),
          {
            log,
            createBackend: () =>
              new variant.Backend({
                kc,
                namespace: 'default',
                runId: `b${Date.now().toString(36)}`,
                image: 'grafana/k6:2.2.0',
                placement: DEDICATED_PLACEMENT,
                cleanup: 'always',
                scheduleTimeoutS: 120,
                activeDeadlineSeconds: 600,
                log,
              }),
          },
        );
        const wallS = (performance.now() - t0) / 1000;
        const own = ownRequests.count - ownBefore;
        const first = Object.values(await target.firstArrivals());
        const firstRequestsMs =
          first.length === runners ? Math.max(...first) - Math.min(...first) : Number.NaN;
        const iterations = [...lastBackend!.firstIterations.values()];
        const firstIterationsMs =
          iterations.length === runners ? Math.max(...iterations) - Math.min(...iterations) : Number.NaN;
        if (TRACE_RUNNERS) console.error(`  ${stamp()} runTest returned`);
        const backend = lastBackend!;
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
          variant: variant.label,
          verdict: result.verdict,
          failures: result.failures,
          wallS,
          testS: result.durationS,
          podStartS,
          overheadS: wallS - result.durationS - podStartS,
          // Where the overhead goes, in s: the local preflight (k6 archive + inspect), from then to
          // the runner Pods created (plan, permission check, ConfigMap, Pods, the Pod watch),
          // collecting the summaries (Pod logs), and the cleanup (deletes, then until no Pod is left).
          stagesS: {
            preflight: (preflightAt - t0) / 1000,
            create: (createdAt - preflightAt) / 1000,
            start: (startsAt - readyAt) / 1000,
            end: (backend.firstTerminateAt - startsAt) / 1000 - result.durationS,
            lingerEnd: (backend.allExitedAt - backend.firstTerminateAt) / 1000,
            collect: backend.collectS,
            cleanup: backend.cleanupS,
          },
          skewMs: result.startSkewMs,
          confirmedMs,
          loadAverage: os.loadavg()[0]!,
          firstRequestsMs,
          firstIterationsMs,
          requests: after.total - before.total - (idle.total - after.total),
          ownRequests: own,
          byResource: net,
        });
        console.error(
          `${phase.runtime} runners=${runners} init=${initS}s round=${round + 1}${variants.length > 1 ? ` (${variant.label})` : ''}: ${result.verdict}, wall ${wallS.toFixed(1)} s, pod start ${podStartS.toFixed(1)} s, skew ${result.startSkewMs.toFixed(2)} ms, first iterations ${firstIterationsMs.toFixed(1)} ms, first requests ${firstRequestsMs.toFixed(1)} ms${result.failures.length ? `\n  failures: ${result.failures.join('; ')}` : ''}`,
        );
      }
      if (variants.length > 1) {
        for (const v of variants) {
          const mine = rounds.filter((r) => r.variant === v.label);
          console.error(
            `  ${v.label}: medians of ${mine.length} rounds: overhead ${median(mine.map((r) => r.overheadS)).toFixed(2)} s, wall ${median(mine.map((r) => r.wallS)).toFixed(2)} s, pod start ${median(mine.map((r) => r.podStartS)).toFixed(2)} s, API requests per runner ${median(mine.map((r) => r.requests / runners)).toFixed(1)}, stages ${STAGES.map((k) => `${k} ${median(mine.map((r) => r.stagesS[k])).toFixed(2)}`).join(', ')}`,
          );
        }
      }
      for (const v of variants) {
        const mine = rounds.filter((r) => r.variant === v.label);
        rows.push(rowOf(phase.runtime, runners, initS, firstSleepS, v.label, mine));
      }
    }
  } finally {
    target.stop();
    // KEEP_CLUSTER=1 leaves the cluster running (its logs in CLUSTER_STATE_DIR/logs); stop it with test/cluster/stop.sh.
    if (!process.env.KEEP_CLUSTER)
      execFileSync('bash', [path.join(ROOT, 'test/cluster/stop.sh')], {
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
  }
  return rows;
}

/** The medians of one case's rounds of one variant (`code`: `this`, or COMPARE's folder name). */
function rowOf(
  runtime: Phase['runtime'],
  runners: number,
  initS: number,
  firstSleepS: number,
  code: string,
  rounds: Round[],
): ClusterRow & { rounds: Round[] } {
  return {
    runtime,
    runners,
    initS,
    firstSleepS,
    code,
    rounds,
    skewMs: median(rounds.map((r) => r.skewMs)),
    confirmedMs: median(rounds.map((r) => r.confirmedMs)),
    loadAverage: median(rounds.map((r) => r.loadAverage)),
    firstRequestsMs: median(rounds.map((r) => r.firstRequestsMs)),
    firstIterationsMs: median(rounds.map((r) => r.firstIterationsMs)),
    podStartS: median(rounds.map((r) => r.podStartS)),
    overheadS: median(rounds.map((r) => r.overheadS)),
    wallS: median(rounds.map((r) => r.wallS)),
    testS: median(rounds.map((r) => r.testS)),
    requestsPerRunner: median(rounds.map((r) => r.requests / runners)),
    ownRequestsPerRunner: median(rounds.map((r) => r.ownRequests / runners)),
    stagesS: Object.fromEntries(STAGES.map((k) => [k, median(rounds.map((r) => r.stagesS[k]))])),
  };
}

/**
 * REPORT_ONLY=1 writes bench/results/cluster.md again from cluster.json (its rows, date and command),
 * measuring nothing: for a change of the report's text.
 */
async function reportOnly(): Promise<void> {
  const json = JSON.parse(await readFile(path.join(RESULTS, 'cluster.json'), 'utf8')) as {
    at: string;
    command: string;
    rows: ClusterRow[];
  };
  const compare = /\bCOMPARE=(\S+)/.exec(json.command)?.[1];
  const md = clusterMarkdown(json.rows, {
    at: json.at,
    cores: os.availableParallelism(),
    rounds: Math.max(...json.rows.filter((r) => !r.measuredAt).map((r) => r.rounds.length)),
    command: json.command,
    ...(compare ? { baseline: path.basename(compare) } : {}),
    kcmQps: /\bKCM_API_QPS=(\S+)/.exec(json.command)?.[1] ?? KCM_QPS,
  });
  await writeFile(path.join(RESULTS, 'cluster.md'), md);
  console.log(md);
}

async function main() {
  if (process.env.REPORT_ONLY) return reportOnly();
  const dir = path.join(os.tmpdir(), `k6d-bench-cluster-${process.pid}`);
  await mkdir(dir, { recursive: true });
  // PHASES=agent (or kubelet) measures one kind of node and keeps the other's rows from the last run.
  const only = process.env.PHASES?.split(',');
  type Row = ClusterRow;
  const kept: Row[] = only
    ? (
        JSON.parse(await readFile(path.join(RESULTS, 'cluster.json'), 'utf8').catch(() => '{"rows":[]}')) as {
          rows: Row[];
        }
      ).rows.filter((r) => !only.includes(r.runtime))
    : [];
  // Rows kept from the last run say when they were measured.
  const lastAt = (
    JSON.parse(await readFile(path.join(RESULTS, 'cluster.json'), 'utf8').catch(() => '{}')) as {
      at?: string;
    }
  ).at;
  for (const r of kept) r.measuredAt ??= lastAt;
  const rows: Row[] = [];
  try {
    for (const phase of PHASES) {
      if (only && !only.includes(phase.runtime)) continue;
      rows.push(...(await runPhase(phase, dir)));
    }
    rows.unshift(...kept.filter((r) => r.runtime === 'kubelet'));
    rows.push(...kept.filter((r) => r.runtime === 'agent'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (ONLY_RUNNERS) return;
  const at = new Date().toISOString();
  const md = clusterMarkdown(rows, {
    at,
    cores: os.availableParallelism(),
    rounds: ROUNDS,
    command: COMMAND,
    ...(process.env.COMPARE ? { baseline: path.basename(path.resolve(process.env.COMPARE)) } : {}),
    kcmQps: KCM_QPS,
  });
  await mkdir(RESULTS, { recursive: true });
  await writeFile(
    path.join(RESULTS, 'cluster.json'),
    `${JSON.stringify({ at, command: COMMAND, rows }, null, 2)}\n`,
  );
  await writeFile(path.join(RESULTS, 'cluster.md'), md);
  console.log(md);
}

await main();
