import { CoreV1Api, KubeConfig, SchedulingV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deleteRun } from '../../src/backends/kubernetes/cleanup.ts';
import { CONTAINERS, LABELS } from '../../src/backends/kubernetes/names.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { runCli, startCli, writeScript } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';
import { leftovers as objectsLeft } from './support/objects.ts';

// `k6-distributed run --backend kubernetes`, the real CLI from source, against the test cluster's
// real kube-apiserver, controller manager, scheduler and real nodes (kubelets with containerd): the
// flags reach the runner Pods, Ctrl-C stops the runners and removes what the run created, and a
// value the API server refuses is named by its flag. The child gets KUBECONFIG pointing nowhere, so
// only --kubeconfig can lead it to the cluster.

const NAMESPACE = 'k6d-cli';
const REGISTRY = process.env.K6D_REGISTRY!;
const PULL_SECRET = 'k6d-cli-regcred';
const SERVICE_ACCOUNT = 'k6d-cli-runner';
const PRIORITY_CLASS = 'k6d-cli-low';
const kc = new KubeConfig();
let core: CoreV1Api;
let target: RecordingTarget;

/** Flags every run here gives: the cluster, the namespace, the dedicated nodes. */
const CLUSTER = () => [
  '--backend',
  'kubernetes',
  '--kubeconfig',
  process.env.KUBECONFIG!,
  '--namespace',
  NAMESPACE,
  '--node-selector',
  'k6-distributed.test/pool=loadtest',
  '--tolerations',
  '[{key: k6-distributed.test/dedicated, operator: Equal, value: loadtest, effect: NoSchedule}]',
];
const CHILD_ENV = { KUBECONFIG: '/nonexistent/kubeconfig' };

beforeAll(async () => {
  kc.loadFromFile(process.env.KUBECONFIG!);
  core = kc.makeApiClient(CoreV1Api);
  target = await startNodeTarget(process.env.K6D_POD_GATEWAY!);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const auth = Buffer.from(`${process.env.K6D_REGISTRY_USER}:${process.env.K6D_REGISTRY_PASSWORD}`).toString(
    'base64',
  );
  await core.createNamespacedSecret({
    namespace: NAMESPACE,
    body: {
      metadata: { name: PULL_SECRET },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [REGISTRY]: { auth } } }) },
    },
  });
  await core.createNamespacedServiceAccount({
    namespace: NAMESPACE,
    body: { metadata: { name: SERVICE_ACCOUNT } },
  });
  await kc.makeApiClient(SchedulingV1Api).createPriorityClass({
    body: { metadata: { name: PRIORITY_CLASS }, value: 500, preemptionPolicy: 'Never' },
  });
});
afterAll(async () => {
  await target.stop();
  await kc
    .makeApiClient(SchedulingV1Api)
    .deletePriorityClass({ name: PRIORITY_CLASS })
    .catch(() => {});
  await core.deleteNamespace({ name: NAMESPACE }).catch(() => {});
});

/** Every object of ours left in the namespace. */
const leftovers = () => objectsLeft(kc, NAMESPACE);

afterEach(async () => {
  expect(await leftovers()).toEqual([]);
});

/** Starts the CLI on the cluster and resolves once it logged that its 2 runners started. */
async function startedRun(script: string, k6Flags: string[] = []) {
  const { child, done } = startCli(
    ['run', script, '--runners', '2', ...CLUSTER(), ...(k6Flags.length > 0 ? ['--', ...k6Flags] : [])],
    { env: CHILD_ENV },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  await waitFor(() => stderr.includes('started 2 runners'), "the run to log 'started 2 runners'", {
    timeoutMs: 90_000,
    intervalMs: 100,
  });
  return { child, done };
}

describe('k6-distributed run --backend kubernetes', () => {
  it('runs the test on the dedicated nodes with every pod-spec flag in the runner Pods', async () => {
    const script = writeScript(`
import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 200 } },
  thresholds: { http_reqs: ['count==200'] },
};
export default function () { http.get(__ENV.TARGET + '/cli', { headers: { 'x-runner': __ENV.K6D_RUNNER_INDEX } }); }
`);
    // --pod-patch from a file: an env var and an init container whose root file system is left
    // writable, which the run warns about naming the flag.
    const patch = writeScript(
      `spec:
  initContainers: [{name: init, image: ${REGISTRY}/k6d/k6:2.2.0, command: [k6, version], securityContext: {readOnlyRootFilesystem: false}}]
  containers: [{name: k6, env: [{name: PATCHED, value: "yes"}]}]
`,
      'runner-patch.yaml',
    );
    const before = target.arrivals.length;
    // The runner Pods as they ran (listed while the run goes on): each is deleted to end k6's
    // --linger once teardown() ran.
    const seen = new Map<string, V1Pod>();
    const listing = setInterval(() => {
      core
        .listNamespacedPod({ namespace: NAMESPACE, labelSelector: `${LABELS.managedBy}=k6-distributed` })
        .then((list) => {
          for (const pod of list.items) seen.set(pod.metadata!.uid!, pod);
        })
        .catch(() => {});
    }, 200);
    const run = await runCli(
      [
        'run',
        script,
        '--runners',
        '2',
        ...CLUSTER(),
        '--runner-image',
        `${REGISTRY}/k6d/k6:2.2.0`,
        '--image-pull-secrets',
        PULL_SECRET,
        '--service-account',
        SERVICE_ACCOUNT,
        '--priority-class',
        PRIORITY_CLASS,
        '--pod-annotations',
        'sidecar.istio.io/inject=false',
        '--labels',
        'team=perf',
        '--resources',
        '{requests: {cpu: 50m, memory: 128Mi}, limits: {memory: 512Mi}}',
        '--barrier-resources',
        '{requests: {cpu: 5m, memory: 16Mi}, limits: {memory: 200Mi}}',
        '--env',
        'GREETING=hello',
        '--pod-patch',
        patch,
        '--cleanup',
        'never',
        '--',
        '-e',
        `TARGET=${target.url}`,
      ],
      { env: CHILD_ENV },
    );
    const runId = /run (\S+) in namespace k6d-cli/.exec(run.stderr)?.[1];
    expect(runId, run.stderr).toBeDefined();
    try {
      expect(run.code, run.stderr).toBe(0);
      const result = run.result!;
      expect(result.verdict).toBe('passed');
      expect(result.environment).toMatchObject({
        backend: 'kubernetes',
        runners: 2,
        runnerImage: `${REGISTRY}/k6d/k6:2.2.0`,
      });
      expect(result.metrics.iterations!.values.count).toBe(200);
      expect(target.arrivals.slice(before).filter((a) => a.path === '/cli')).toHaveLength(200);
      const nodes = result.runners.map((r) => r.node);
      expect(new Set(nodes).size).toBe(2);
      for (const node of nodes) expect(node).toMatch(/^k6d-loadtest-\d+$/);

      // --cleanup never keeps the run's objects (the runner Pods were deleted to end k6's --linger
      // once teardown() ran); the Pods as created show what the flags asked for.
      expect(run.stderr).toContain(
        `kubectl delete configmap,pod -n ${NAMESPACE} -l ${LABELS.runId}=${runId}`,
      );
      const pods = [...seen.values()].filter((p) => p.metadata?.labels?.[LABELS.runId] === runId);
      expect(pods).toHaveLength(2);
      for (const pod of pods) {
        expect(pod.metadata!.annotations).toMatchObject({ 'sidecar.istio.io/inject': 'false' });
        expect(pod.metadata!.labels).toMatchObject({ team: 'perf' });
        expect(pod.spec!.imagePullSecrets).toEqual([{ name: PULL_SECRET }]);
        expect(pod.spec!.serviceAccountName).toBe(SERVICE_ACCOUNT);
        expect(pod.spec!.priorityClassName).toBe(PRIORITY_CLASS);
        const [k6, barrier] = [CONTAINERS.k6, CONTAINERS.barrier].map(
          (name) => pod.spec!.containers.find((c) => c.name === name)!,
        );
        expect(k6!.resources).toEqual({
          requests: { cpu: '50m', memory: '128Mi' },
          limits: { memory: '512Mi' },
        });
        expect(barrier!.resources).toEqual({
          requests: { cpu: '5m', memory: '16Mi' },
          limits: { memory: '200Mi' },
        });
        expect(k6!.env).toContainEqual({ name: 'GREETING', value: 'hello' });
        expect(k6!.env).toContainEqual({ name: 'PATCHED', value: 'yes' });
        expect(pod.spec!.initContainers!.map((c) => c.name)).toEqual(['init']);
      }
      expect(run.stderr).toContain(
        "--pod-patch loosens the runner Pods' hardened defaults: spec.initContainers[init].securityContext.readOnlyRootFilesystem\n",
      );
    } finally {
      clearInterval(listing);
      expect(await deleteRun(kc, NAMESPACE, runId!, { warning: () => {} })).toEqual([]);
    }
  });

  it('Ctrl-C stops every runner, writes the partial result, removes the run and exits 130', async () => {
    const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 2, duration: '120s' };
export default function () { http.get(__ENV.TARGET + '/cli-interrupt'); sleep(0.05); }
`);
    const { child, done } = await startedRun(script, ['-e', `TARGET=${target.url}`]);
    expect(await leftovers()).not.toEqual([]);
    await new Promise((r) => setTimeout(r, 2000));
    child.kill('SIGINT');
    const run = await done;
    expect(run.code, run.stderr).toBe(130);
    expect(run.result!.verdict).toBe('failed');
    expect(run.result!.failureKinds).toEqual(['interrupted']);
    expect(run.result!.metrics.http_reqs!.values.count).toBeGreaterThan(0);
    // Stopped through their REST API (k6 exits 103), their summaries collected before the cleanup.
    expect(run.result!.runners.map((r) => r.exitCode)).toEqual([103, 103]);
    expect(run.result!.durationS).toBeLessThan(60);
  });

  it('a second Ctrl-C deletes the run at once and exits 130', async () => {
    const script = writeScript(`
import { sleep } from 'k6';
export const options = { vus: 2, duration: '120s' };
export default function () { sleep(0.1); }
`);
    const { child, done } = await startedRun(script);
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    const run = await done;
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain('received again: deleting the run');
    // Deleted without waiting: the Pods go as their kubelets stop them.
    const end = Date.now() + 60_000;
    let left = await leftovers();
    while (left.length > 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 500));
      left = await leftovers();
    }
    expect(left).toEqual([]);
  });

  it('names the flag whose value the API server refused, and leaves nothing behind', async () => {
    const script = writeScript('export default function () {}\n');
    // Each quantity is valid, so only the API server can refuse it: requests above the limit.
    const run = await runCli(
      ['run', script, ...CLUSTER(), '--resources', '{requests: {cpu: "2"}, limits: {cpu: "1"}}'],
      { env: CHILD_ENV },
    );
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trim()).toMatch(
      /error: --resources: creating the runners in namespace k6d-cli failed \(422: .*must be less than or equal to cpu limit/,
    );
    expect(run.result).toBeUndefined();
  });
});
