import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteRun } from '../../src/backends/kubernetes/cleanup.ts';
import { LABELS } from '../../src/backends/kubernetes/names.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { type ActionStep, runAction, startAction } from '../support/action.ts';
import { tempDir, writeScript } from '../support/cli.ts';
import { type FaultProxy, type FaultRule, startFaultProxy } from './support/fault-proxy.ts';
import { leftovers } from './support/objects.ts';

// Kubernetes faults, table-driven: the bundled run action (dist/run.js) against the test cluster's
// real API server and kubelets, through a fault-injecting proxy (support/fault-proxy.ts) where the
// API server must fail on demand; Pods are deleted and evicted through the real API, and a node
// goes NotReady because its real kubelet is frozen (SIGSTOP). A case is ok when the step exits with
// the documented code, says why in one line (which runner, Pod or node, and why), keeps the data of
// the runners that finished, and leaves no ConfigMap, Job or Pod behind.

const STATE = process.env.CLUSTER_STATE_DIR!;
const kc = new KubeConfig();
let core: CoreV1Api;
let target: RecordingTarget;
let proxy: FaultProxy;

const DEDICATED = {
  'node-selector': 'k6-distributed.test/pool=loadtest',
  tolerations: '[{key: k6-distributed.test/dedicated, operator: Equal, value: loadtest, effect: NoSchedule}]',
};

/** A few seconds of light load per runner. */
const steady = (seconds: number) =>
  writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 2, duration: '${seconds}s' };
export default function () { http.get(__ENV.TARGET + '/fault'); sleep(0.1); }
`);

/** What a case can do once every runner was started. */
interface During {
  pods: V1Pod[];
  step: ReturnType<typeof startAction>;
}

interface FaultCase {
  name: string;
  /** Rules in force from the first request. */
  rules?: FaultRule[];
  /** Seconds of load. */
  seconds?: number;
  /** The script's source, when not {@link steady}'s (`seconds` is then the script's own). */
  script?: string;
  runners?: number;
  inputs?: Record<string, string>;
  /** Runs once the step logged that every runner started. */
  during?: (d: During) => Promise<void>;
  /** The step's exit code: 0 (passed), 1 (failed), or null when the case kills the step. */
  exit: 0 | 1 | null;
  /** The one `::error::` line, when the step fails. */
  error?: RegExp;
  /** Rules that must have been applied (so the fault really happened). */
  applied?: string[];
  /** Runners whose summaries must be in the result (their data kept). */
  kept?: number[];
  /** Extra checks. */
  check?: (step: ActionStep, result: RunResult | undefined) => void | Promise<void>;
}

/** Runner `index`'s Pod among `pods`. */
const podOf = (pods: V1Pod[], index: number) =>
  pods.find((p) => p.metadata!.labels![LABELS.runner] === String(index))!;

/** Reads of runner `index`'s k6 container log (its summary); its barrier container's log is another. */
const logOf = (index: number) => new RegExp(`/pods/k6d-[a-z0-9]+-${index}/log\\?(.*&)?container=k6(&|$)`);
const barrierLogOf = (index: number) =>
  new RegExp(`/pods/k6d-[a-z0-9]+-${index}/log\\?(.*&)?container=barrier(&|$)`);
const POD_PROXY = (what: string) => new RegExp(`/pods/[^/]+:6565/proxy/v1/${what}`);
/** Runner `index`'s start time, set in its barrier container's mailbox (port 6566). */
const MAILBOX_OF = (index: number) => new RegExp(`/pods/k6d-[a-z0-9]+-${index}:6566/proxy/v1/setup`);

const CASES: FaultCase[] = [
  {
    name: 'launch: two 503s while creating the runner Pods are retried',
    rules: [{ name: 'pods-503', method: 'POST', path: /\/pods$/, status: 503, times: 2 }],
    exit: 0,
    applied: ['pods-503'],
    kept: [0, 1],
  },
  {
    name: 'launch: a 500 on every runner Pod creation fails, naming the API error',
    rules: [{ name: 'pods-500', method: 'POST', path: /\/pods$/, status: 500 }],
    exit: 1,
    error:
      /creating the runners in namespace default failed \(500: the API server failed; retry later\): injected/,
    applied: ['pods-500'],
  },
  {
    name: 'launch: the API server times out once on the ConfigMap; the request is retried',
    rules: [{ name: 'configmap-slow', method: 'POST', path: /\/configmaps$/, delayMs: 60_000, times: 1 }],
    exit: 0,
    applied: ['configmap-slow'],
    kept: [0, 1],
  },
  {
    name: 'launch: a 429 on the permission check is retried',
    rules: [{ name: 'review-429', method: 'POST', path: /selfsubjectrulesreviews/, status: 429, times: 2 }],
    exit: 0,
    applied: ['review-429'],
  },
  {
    name: 'barrier: 503 from the pod proxy on the first status polls',
    rules: [{ name: 'status-503', method: 'GET', path: POD_PROXY('status'), status: 503, times: 3 }],
    exit: 0,
    applied: ['status-503'],
    kept: [0, 1],
  },
  {
    name: "barrier: runner 1's barrier log cannot be followed (500): it is polled through the pod proxy",
    rules: [{ name: 'barrier1-500', method: 'GET', path: barrierLogOf(1), status: 500 }],
    exit: 0,
    applied: ['barrier1-500'],
    kept: [0, 1],
    check: (_step, result) => {
      // Runner 1's status (its end, its VUs) came through the pod proxy instead; its start could
      // not be confirmed by its barrier log, so every runner was un-paused through the pod proxy.
      expect(proxy.seen.some((r) => /^GET .*-1:6565\/proxy\/v1\/status/.test(r))).toBe(true);
      expect(proxy.seen.filter((r) => /^PATCH .*:6565\/proxy\/v1\/status/.test(r))).toHaveLength(2);
      expect(proxy.seen.some((r) => MAILBOX_OF(0).test(r) || MAILBOX_OF(1).test(r))).toBe(false);
      expect(result!.metrics.vus!.values.max).toBe(2);
    },
  },
  {
    name: 'monitoring: every barrier log follow is cut after 1.5 s and opened again; the VU count is whole',
    rules: [{ name: 'barrier-cut', method: 'GET', path: barrierLogOf(0), cutAfterMs: 1500, times: 3 }],
    seconds: 6,
    exit: 0,
    applied: ['barrier-cut'],
    kept: [0, 1],
    check: (_step, result) => {
      expect(proxy.hits.get('barrier-cut')).toBe(3);
      expect(result!.metrics.vus!.values.max).toBe(2);
      // Runner 0's end came from its followed log: its status was never polled through the proxy.
      expect(proxy.seen.filter((r) => /^GET .*-0:6565\/proxy\/v1\/status/.test(r))).toHaveLength(1);
    },
  },
  {
    name: "collection: runner 0's k6 log follow is cut mid-test; it is followed anew at the end, its summary kept",
    // Each VU logs a line at once, so the k6 log is not empty when it is followed (from 1 s after
    // the start): the follow's headers come then, and the proxy cuts it 1.5 s later, mid-test.
    script: `
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
export const options = { vus: 2, duration: '6s' };
export default function () {
  if (exec.vu.iterationInScenario === 0) console.log('first iteration');
  http.get(__ENV.TARGET + '/fault');
  sleep(0.1);
}
`,
    rules: [{ name: 'k6log-cut', method: 'GET', path: logOf(0), cutAfterMs: 1500, times: 1 }],
    exit: 0,
    applied: ['k6log-cut'],
    kept: [0, 1],
    check: () => {
      // The follow opened after the start, cut; then the one opened when its linger was ended.
      const follows = proxy.seen.filter((r) => logOf(0).test(r) && r.includes('follow=true'));
      expect(follows.length).toBe(2);
    },
  },
  {
    name: 'barrier: the pod proxy never answers; the start timeout names the runners',
    rules: [{ name: 'status-hangs', method: 'GET', path: POD_PROXY('status'), delayMs: 600_000 }],
    inputs: { 'start-timeout': '20' },
    exit: 1,
    error: /runners not ready after 20 s \(start timeout\): runner 0 \(.*timed out.*\), runner 1/,
    applied: ['status-hangs'],
  },
  {
    name: "start: a 503 on one runner's start time is retried; both start at the scheduled instant",
    rules: [{ name: 'start-503', method: 'PUT', path: MAILBOX_OF(0), status: 503, times: 1 }],
    exit: 0,
    applied: ['start-503'],
    kept: [0, 1],
    check: (step) => {
      expect(step.stdout).toMatch(/started 2 runners at one instant/);
      expect(step.stdout).not.toMatch(/started through the pod proxy/);
    },
  },
  {
    name: "start: runner 1's start time cannot be set (500); it is started through the pod proxy at the instant",
    rules: [{ name: 'mailbox1-500', method: 'PUT', path: MAILBOX_OF(1), status: 500 }],
    exit: 0,
    applied: ['mailbox1-500'],
    kept: [0, 1],
    check: (step) => {
      expect(step.stdout).toMatch(/runner 1: no start time; started through the pod proxy/);
      expect(proxy.seen.filter((r) => /^PATCH .*-1:6565\/proxy\/v1\/status/.test(r))).toHaveLength(1);
      expect(proxy.seen.filter((r) => /^PATCH .*:6565\/proxy\/v1\/status/.test(r))).toHaveLength(1);
    },
  },
  {
    name: 'monitoring: every live-metrics poll fails; the run goes on',
    rules: [{ name: 'metrics-500', method: 'GET', path: POD_PROXY('metrics'), status: 500 }],
    inputs: { 'progress-interval': '1' },
    exit: 0,
    applied: ['metrics-500'],
    kept: [0, 1],
  },
  {
    name: 'watch: every Pod watch is cut after 1 s and resumed',
    rules: [{ name: 'watch-cut', method: 'GET', path: /\/pods\?.*watch=true/, cutAfterMs: 1000 }],
    seconds: 6,
    exit: 0,
    applied: ['watch-cut'],
    kept: [0, 1],
    check: (_step, result) => {
      expect(proxy.hits.get('watch-cut')).toBeGreaterThan(2);
      expect(result!.metrics.iterations!.values.count).toBeGreaterThan(0);
    },
  },
  {
    name: 'watch: re-watching fails with 503 for a while',
    during: async () => {
      proxy.rules.push({
        name: 'rewatch-503',
        method: 'GET',
        path: /\/pods\?.*watch=true/,
        status: 503,
        times: 4,
      });
      expect(proxy.cutStreams()).toBeGreaterThan(0);
    },
    seconds: 6,
    exit: 0,
    applied: ['rewatch-503'],
    kept: [0, 1],
  },
  {
    name: 'collection: one 503 on each log read is retried; nothing is lost',
    rules: [
      { name: 'log0-503', method: 'GET', path: logOf(0), status: 503, times: 1 },
      { name: 'log1-503', method: 'GET', path: logOf(1), status: 503, times: 1 },
    ],
    exit: 0,
    applied: ['log0-503', 'log1-503'],
    kept: [0, 1],
  },
  {
    name: "collection: runner 1's log cannot be read; runner 0's data is kept",
    rules: [{ name: 'log1-500', method: 'GET', path: logOf(1), status: 500 }],
    exit: 1,
    error:
      /runner 1 left no summary \(the log of Pod k6d-[a-z0-9]+-1 could not be read: injected by the fault proxy \(log1-500\)\); its results are missing from the aggregate/,
    applied: ['log1-500'],
    kept: [0],
  },
  {
    name: 'cleanup: 503s on deleting and listing are retried; nothing is left',
    rules: [
      { name: 'delete-cm-503', method: 'DELETE', path: /\/configmaps\//, status: 503, times: 1 },
      { name: 'list-cm-503', method: 'GET', path: /\/configmaps\?labelSelector/, status: 503, times: 1 },
    ],
    exit: 0,
    applied: ['delete-cm-503', 'list-cm-503'],
    kept: [0, 1],
  },
  {
    name: 'spot preemption: a runner Pod deleted mid-test',
    seconds: 8,
    during: async ({ pods }) => {
      await new Promise((r) => setTimeout(r, 1500));
      await core.deleteNamespacedPod({ name: podOf(pods, 0).metadata!.name!, namespace: 'default' });
    },
    exit: 1,
    error: /runner 0 was deleted on node k6d-loadtest-\d/,
    kept: [1],
  },
  {
    name: 'eviction: a runner Pod evicted mid-test (the eviction API, as a drain does)',
    seconds: 8,
    during: async ({ pods }) => {
      const pod = podOf(pods, 1);
      await new Promise((r) => setTimeout(r, 1500));
      await core.createNamespacedPodEviction({
        name: pod.metadata!.name!,
        namespace: 'default',
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: pod.metadata!.name!, namespace: 'default' },
        },
      });
    },
    exit: 1,
    error: /runner 1 was evicted on node k6d-loadtest-\d/,
    kept: [0],
    // The other runner was stopped and handed over its summary.
    check: (_step, result) => expect(result!.runners[0]!.exitCode).toBe(103),
  },
  {
    name: 'node NotReady: the kubelet of a runner’s node stops mid-test',
    seconds: 240,
    inputs: { grace: '30' },
    during: async ({ pods }) => {
      const node = podOf(pods, 1).spec!.nodeName!;
      frozen = kubeletPid(node);
      process.kill(frozen, 'SIGSTOP');
    },
    exit: 1,
    error:
      /runner 1 failed \(runner 1 was lost on node (k6d-loadtest-\d): its Pod was evicted \(DeletionByTaintManager\) .*NotReady.*\); runner 1 left no summary \(its node \1 is gone\)/,
    kept: [0],
  },
  {
    name: 'cancelled job: SIGINT, then SIGKILL, then the post step removes the leftovers',
    seconds: 60,
    during: async ({ step }) => {
      step.child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 300));
      step.child.kill('SIGKILL');
    },
    exit: null,
    check: async (step) => {
      expect(step.state.runId).toMatch(/^r[a-z0-9]+$/);
      expect(await leftovers(kc, 'default', step.state.runId)).not.toEqual([]);
      const post = await runAction(
        'dist/run-post.js',
        { kubeconfig: proxy.kubeconfig, script: steady(1) },
        { state: step.state },
      );
      expect(post.code).toBe(0);
      expect(post.stdout).toContain(`post: removed every object of run ${step.state.runId}`);
    },
  },
];

/** The PID of the kubelet of node `name` (test/cluster's pids file). */
function kubeletPid(name: string): number {
  const line = readFileSync(path.join(STATE, 'pids'), 'utf8')
    .split('\n')
    .find((l) => l.split(/\s+/)[0] === `kubelet-${name}`);
  const holder = Number(line!.split(/\s+/)[1]);
  // The spawned PID is nsenter's; the kubelet is the process it exec'd (the same PID) or its child.
  const comm = readFileSync(`/proc/${holder}/comm`, 'utf8').trim();
  if (comm === 'kubelet') return holder;
  return Number(execFileSync('pgrep', ['-P', String(holder), 'kubelet'], { encoding: 'utf8' }).trim());
}
let frozen: number | undefined;

/**
 * Waits until every node is Ready again and carries no node lifecycle taint (after a frozen kubelet).
 * @throws Error when that takes longer than `timeoutMs`.
 */
async function nodesReady(timeoutMs = 90_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const nodes = (await core.listNode()).items;
    const ready = nodes.every(
      (n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
        !n.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/')),
    );
    if (ready) return;
    // A node that did not come back would fail the next tests' placements instead of this case.
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`nodes not Ready and untainted ${timeoutMs} ms after the kubelet resumed`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

beforeAll(async () => {
  kc.loadFromFile(process.env.KUBECONFIG!);
  core = kc.makeApiClient(CoreV1Api);
  target = await startNodeTarget(process.env.K6D_POD_GATEWAY!);
  proxy = await startFaultProxy({
    upstream: process.env.K6D_APISERVER!,
    caFile: process.env.K6D_CA_CERT!,
    certFile: process.env.K6D_ADMIN_CERT!,
    keyFile: process.env.K6D_ADMIN_KEY!,
  });
});
afterAll(async () => {
  if (frozen) process.kill(frozen, 'SIGCONT');
  await proxy?.stop();
  await target?.stop();
});

/** `K6D_FAULTS=regexp` runs only the cases whose name matches (to chase one fault). */
const only = process.env.K6D_FAULTS ? new RegExp(process.env.K6D_FAULTS) : undefined;
const cases = CASES.filter((c) => !only || only.test(c.name));

let ok = 0;
describe('Kubernetes faults', () => {
  afterAll(() => {
    console.log(`${cases.length} cases, ${ok} ok`);
  });

  it.each(cases.map((c) => [c.name, c] as const))(
    '%s',
    async (_name, c) => {
      proxy.rules.splice(0, proxy.rules.length, ...(c.rules ?? []));
      proxy.hits.clear();
      proxy.seen.length = 0;
      const workspace = tempDir('k6d-fault-');
      const step = startAction(
        'dist/run.js',
        {
          script: c.script === undefined ? steady(c.seconds ?? 3) : writeScript(c.script),
          runners: String(c.runners ?? 2),
          kubeconfig: proxy.kubeconfig,
          ...DEDICATED,
          'k6-args': `-e TARGET=${target.url}`,
          'start-timeout': '60',
          'schedule-timeout': '30',
          ...c.inputs,
        },
        { workspace },
      );
      let out = '';
      let during: Promise<void> | undefined;
      step.child.stdout!.on('data', (d) => {
        out += d;
        if (c.during && !during && /started \d+ runners/.test(out)) {
          during = core
            .listNamespacedPod({ namespace: 'default', labelSelector: `${LABELS.managedBy}=k6-distributed` })
            .then((list) => c.during!({ pods: list.items, step }));
        }
      });
      const done = await step.done;
      await during;
      if (frozen) {
        process.kill(frozen, 'SIGCONT');
        frozen = undefined;
        await nodesReady();
      }
      try {
        await judge(c, done, workspace);
      } finally {
        // A case that failed leaves nothing for the next one.
        if (done.state.runId) await deleteRun(kc, 'default', done.state.runId, { warning: () => {} });
      }
      ok++;
    },
    300_000,
  );
});

/** Asserts what case `c` promises about the step `done` (its workspace holds the result). */
async function judge(c: FaultCase, done: ActionStep, workspace: string): Promise<void> {
  const context = `${done.stdout}\n${done.stderr}`;
  expect(done.code, context).toBe(c.exit);
  const errors = done.annotations.filter((a) => a.startsWith('::error::'));
  console.log(`${c.name}: exit ${done.code}${errors[0] ? ` ${errors[0]}` : ''}`);
  if (c.exit === 1) {
    expect(errors, context).toHaveLength(1);
    // One line: a workflow command escapes newlines as %0A.
    expect(errors[0]).not.toMatch(/%0A/);
    expect(errors[0]).toMatch(c.error!);
  } else if (c.exit === 0) {
    expect(errors, context).toEqual([]);
  }
  for (const rule of c.applied ?? []) expect(proxy.hits.get(rule) ?? 0, rule).toBeGreaterThan(0);
  const resultPath = done.outputs['result-path'];
  const result = resultPath
    ? (JSON.parse(readFileSync(path.join(workspace, resultPath), 'utf8')) as RunResult)
    : undefined;
  for (const i of c.kept ?? []) {
    expect(result, context).toBeDefined();
    expect(result!.runners[i]!.requests ?? 0, `runner ${i}'s data`).toBeGreaterThan(0);
    expect(result!.failures.filter((f) => f.includes(`runner ${i} left no summary`))).toEqual([]);
  }
  if (c.kept?.length) expect(result!.metrics.http_reqs!.values.count).toBeGreaterThan(0);
  await c.check?.(done, result);
  expect(await leftovers(kc, 'default', done.state.runId)).toEqual([]);
}
