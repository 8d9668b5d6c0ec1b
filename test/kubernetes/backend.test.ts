import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig, SchedulingV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { parse } from 'yaml';
import { KubernetesBackend } from '../../src/backends/kubernetes/backend.ts';
import { LABELS } from '../../src/backends/kubernetes/names.ts';
import type { KubernetesBackendOptions } from '../../src/backends/kubernetes/options.ts';
import type { PodPatch } from '../../src/backends/kubernetes/pod-patch.ts';
import { parseRunConfig } from '../../src/config.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { runTest } from '../../src/run/index.ts';
import { tempDir, writeScript } from '../support/cli.ts';
import { DEDICATED_PLACEMENT } from '../support/placement.ts';

// The Kubernetes backend driven directly (options the action does not expose yet), against the
// test cluster's real kubelets and containerd (test/cluster/kubelet-nodes.sh): every runner Pod is
// a real container of the runner image, which holds k6 and its libraries and no shell. Host-side
// checks read the container's process through /proc (the tests run as root on the nodes' host).

const STATE = process.env.CLUSTER_STATE_DIR!;
const REGISTRY = process.env.K6D_REGISTRY!;
const kc = new KubeConfig();
let core: CoreV1Api;
let target: RecordingTarget;

beforeAll(async () => {
  kc.loadFromFile(process.env.KUBECONFIG!);
  core = kc.makeApiClient(CoreV1Api);
  target = await startNodeTarget(process.env.K6D_POD_GATEWAY!);
});
afterAll(async () => {
  await target.stop();
});
afterEach(async () => {
  const pods = await core.listNamespacedPod({
    namespace: 'default',
    labelSelector: `${LABELS.managedBy}=k6-distributed`,
  });
  expect(pods.items.map((p) => p.metadata?.name)).toEqual([]);
});

interface Run {
  result?: RunResult;
  error?: Error;
  logs: string[];
}

/**
 * Runs `script` on the cluster through {@link runTest} with a backend of the given options;
 * `onStarted` runs once every runner has been started (the runners' Pods are listed for it).
 */
async function run(
  script: string,
  options: Partial<KubernetesBackendOptions> & { runners?: number },
  onStarted?: (pods: V1Pod[]) => Promise<void>,
): Promise<Run> {
  const runId = `t${Date.now().toString(36)}`;
  const logs: string[] = [];
  let started: Promise<void> | undefined;
  const log = {
    info: (m: string) => {
      logs.push(m);
      if (onStarted && m.startsWith('started ')) {
        started = core
          .listNamespacedPod({ namespace: 'default', labelSelector: `${LABELS.runId}=${runId}` })
          .then((list) => onStarted(list.items));
      }
    },
    warning: (m: string) => logs.push(`warning: ${m}`),
    error: (m: string) => logs.push(`error: ${m}`),
    debug: () => {},
  };
  const { runners = 2, ...backend } = options;
  const out: Run = { logs };
  // A run that outlives its test would leave Pods that fail every later test's leftover check:
  // past 100 s it is interrupted (as a Ctrl-C: stop, collect, delete). Its log is printed when
  // the test fails, so a cold CI run says where it stood.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), 100_000);
  onTestFailed(() => console.log(`run ${runId}:\n${logs.join('\n')}`));
  try {
    out.result = await runTest(
      parseRunConfig({
        script,
        runners,
        k6Args: ['-e', `TARGET=${target.url}`],
        resultPath: path.join(tempDir('k6d-k8s-'), 'result.json'),
        startTimeoutS: 60,
      }),
      {
        log,
        createBackend: () =>
          new KubernetesBackend({
            kc,
            namespace: 'default',
            runId,
            image: 'grafana/k6:2.2.0',
            placement: DEDICATED_PLACEMENT,
            cleanup: 'always',
            scheduleTimeoutS: 20,
            activeDeadlineSeconds: 600,
            log,
            ...backend,
          }),
        signal: deadline.signal,
      },
    );
  } catch (error) {
    out.error = error as Error;
  } finally {
    clearTimeout(timer);
  }
  await started;
  return out;
}

/** The host PID of a Pod's container, from the node's own containerd. */
function containerPid(pod: V1Pod, container: string): number {
  const id = pod
    .status!.containerStatuses!.find((c) => c.name === container)!
    .containerID!.replace('containerd://', '');
  const socket = path.join(STATE, 'nodes', pod.spec!.nodeName!, 'containerd.sock');
  const tasks = execFileSync('ctr', ['--address', socket, '-n', 'k8s.io', 'tasks', 'ls'], {
    encoding: 'utf8',
  });
  const line = tasks.split('\n').find((l) => l.startsWith(id));
  return Number(line!.trim().split(/\s+/)[1]);
}

const steady = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 4, duration: '6s' };
export default function () { http.get(__ENV.TARGET + '/steady'); sleep(0.1); }
`);

describe('runner Pods on real kubelets', () => {
  it('run under the restricted profile: non-root, no capabilities, no new privileges, seccomp, read-only root; sysctls applied; the quantile grid in their environment', async () => {
    const seen: Array<Record<string, string>> = [];
    const { result, error } = await run(
      steady,
      { sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }] },
      async (pods) => {
        for (const pod of pods) {
          const pid = containerPid(pod, 'k6');
          const status = readFileSync(`/proc/${pid}/status`, 'utf8');
          const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)![1]!.trim();
          const root = readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
            .split('\n')
            .find((l) => l.split(' ')[4] === '/')!;
          seen.push({
            uid: field('Uid').split(/\s+/)[0]!,
            capEff: field('CapEff'),
            capBnd: field('CapBnd'),
            noNewPrivs: field('NoNewPrivs'),
            seccomp: field('Seccomp'),
            rootMount: root.split(' ')[5]!.split(',')[0]!,
            portRange: execFileSync(
              'nsenter',
              ['-t', String(pid), '-n', 'cat', '/proc/sys/net/ipv4/ip_local_port_range'],
              {
                encoding: 'utf8',
              },
            )
              .trim()
              .replace(/\s+/g, ' '),
            // The quantile grid comes from the run's ConfigMap (configMapKeyRef), not the Pod spec.
            gridInEnv: String(
              (
                readFileSync(`/proc/${pid}/environ`, 'utf8')
                  .split('\0')
                  .find((e) => e.startsWith('K6_SUMMARY_TREND_STATS=')) ?? ''
              ).split(',').length > 900,
            ),
            shell: String(
              ['/bin/sh', '/usr/bin/sh', '/bin/busybox'].some((f) => {
                try {
                  readFileSync(`/proc/${pid}/root${f}`);
                  return true;
                } catch {
                  return false;
                }
              }),
            ),
          });
        }
      },
    );
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
    expect(seen).toHaveLength(2);
    for (const s of seen) {
      expect(s).toEqual({
        uid: '12345',
        capEff: '0000000000000000',
        capBnd: '0000000000000000',
        noNewPrivs: '1',
        seccomp: '2',
        rootMount: 'ro',
        portRange: '1024 65535',
        gridInEnv: 'true',
        shell: 'false',
      });
    }
  });

  it('reports a runner over its memory limit as OOMKilled, naming the runner and the limit', async () => {
    const script = writeScript(`
import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = { vus: 2, duration: '20s' };
// About 16 MB per array in k6's JS runtime: 64 of them are far above the 128Mi limit, and bounded
// (about 1 GiB per VU) should the limit ever not be enforced, so the machine is never starved.
const hog = [];
export default function () {
  if (__ENV.K6D_RUNNER_INDEX === '1') while (hog.length < 64) hog.push(new Array(1e6).fill(hog.length));
  sleep(0.5);
}
`);
    const { result, error } = await run(script, { resources: { limits: { memory: '128Mi' } } });
    const message = error?.message ?? result!.failures.join('\n');
    expect(message).toMatch(
      /runner 1 was OOMKilled on node k6d-loadtest-\d: it used more than its memory limit of 128Mi/,
    );
  });
  // Eviction and deletion mid-test: test/kubernetes/faults.test.ts.
});

describe('images from a registry', () => {
  const image = `${REGISTRY}/k6d/k6:2.2.0`;
  const secret = 'k6d-test-regcred';

  beforeAll(async () => {
    const auth = Buffer.from(
      `${process.env.K6D_REGISTRY_USER}:${process.env.K6D_REGISTRY_PASSWORD}`,
    ).toString('base64');
    await core.createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: { name: secret },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [REGISTRY]: { auth } } }) },
      },
    });
  });
  afterAll(async () => {
    await core.deleteNamespacedSecret({ name: secret, namespace: 'default' }).catch(() => {});
  });

  it('without the pull secret, the pull is refused and the run fails before the start', async () => {
    const { error } = await run(steady, { image });
    expect(error?.message).toMatch(
      /runner \d failed before the start \(Pod k6d-.*: (ErrImagePull|ImagePullBackOff): .*(401|nauthorized)/,
    );
  });

  it('with imagePullSecrets the private image is pulled and runs', async () => {
    const { result, error } = await run(steady, { image, imagePullSecrets: [secret] });
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
  });

  it('an image missing from the registry is reported as a pull failure', async () => {
    const { error } = await run(steady, { image: `${REGISTRY}/k6d/missing:1`, imagePullSecrets: [secret] });
    expect(error?.message).toMatch(/Pod k6d-.*: (ErrImagePull|ImagePullBackOff): .*not found/);
  });
});

describe('Pod options', () => {
  beforeAll(async () => {
    await core.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'k6-runner' } },
    });
    await kc.makeApiClient(SchedulingV1Api).createPriorityClass({
      body: { metadata: { name: 'k6d-load-test' }, value: 1000, preemptionPolicy: 'Never' },
    });
  });
  afterAll(async () => {
    await core.deleteNamespacedServiceAccount({ name: 'k6-runner', namespace: 'default' }).catch(() => {});
    await kc
      .makeApiClient(SchedulingV1Api)
      .deletePriorityClass({ name: 'k6d-load-test' })
      .catch(() => {});
  });

  it('reach the runner Pods: annotations, labels, service account, priority class, resources of both containers', async () => {
    const seen: V1Pod[] = [];
    const limits: string[] = [];
    const { result, error } = await run(
      steady,
      {
        podAnnotations: { 'sidecar.istio.io/inject': 'false' },
        labels: { team: 'perf' },
        serviceAccountName: 'k6-runner',
        priorityClassName: 'k6d-load-test',
        resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } },
        barrierResources: { requests: { cpu: '5m', memory: '16Mi' }, limits: { memory: '200Mi' } },
      },
      async (pods) => {
        seen.push(...pods);
        const pid = containerPid(pods[0]!, 'k6');
        const cgroup = /^\d+:memory:(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))![1]!;
        limits.push(readFileSync(`/sys/fs/cgroup/memory${cgroup}/memory.limit_in_bytes`, 'utf8').trim());
      },
    );
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
    expect(seen).toHaveLength(2);
    for (const pod of seen) {
      expect(pod.metadata!.annotations).toMatchObject({ 'sidecar.istio.io/inject': 'false' });
      expect(pod.metadata!.labels).toMatchObject({ team: 'perf' });
      expect(pod.spec!.serviceAccountName).toBe('k6-runner');
      expect(pod.spec!.priorityClassName).toBe('k6d-load-test');
      expect(pod.spec!.priority).toBe(1000);
      expect(pod.spec!.containers.map((c) => c.resources?.limits?.memory)).toEqual(['512Mi', '200Mi']);
    }
    // The kubelet enforces the limit: the k6 container's memory cgroup holds it.
    expect(limits).toEqual([String(512 * 1024 * 1024)]);
  });
});

describe('a pod-patch', () => {
  // The patch reaches real containers: a volume (a ConfigMap the test makes, mounted into the k6
  // container: k6 reads its config file from it through K6_CONFIG, as a runner runs the archive on
  // its own file system, where `open()` sees only the archive's files), an `envFrom` (another
  // ConfigMap, its variables read by the script), a required node affinity picking one dedicated
  // node by its hostname label, an init container and a label.
  const node = 'k6d-loadtest-2';
  const env = 'k6d-test-pp-env';
  const files = 'k6d-test-pp-files';

  beforeAll(async () => {
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: { name: env },
        data: { FROM_ENVFROM: 'hello-envfrom', K6_CONFIG: '/k6d-data/config.json' },
      },
    });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: { name: files },
        data: { 'config.json': '{"userAgent": "from-volume/1"}', 'note.txt': 'mounted' },
      },
    });
  });
  afterAll(async () => {
    for (const name of [env, files])
      await core.deleteNamespacedConfigMap({ name, namespace: 'default' }).catch(() => {});
  });

  it('mounts a volume, takes envFrom, follows a node affinity and runs an init container on real kubelets', async () => {
    const script = writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
import { check, sleep } from 'k6';
export const options = { vus: 2, duration: '4s', thresholds: { checks: ['rate==1'] } };
export default function () {
  const seen = __ENV.FROM_ENVFROM + '|' + exec.test.options.userAgent;
  http.get(__ENV.TARGET + '/patched', { headers: { 'x-runner': seen } });
  check(null, {
    'envFrom reached the script': () => __ENV.FROM_ENVFROM === 'hello-envfrom',
    'the volume reached k6': () => exec.test.options.userAgent === 'from-volume/1',
  });
  sleep(0.2);
}
`);
    const podPatch = parse(`
metadata: {labels: {patched: "yes"}}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [${node}]}]
  initContainers:
    - {name: init, image: grafana/k6:2.2.0, command: [k6, version]}
  containers:
    - name: k6
      envFrom: [{configMapRef: {name: ${env}}}]
      volumeMounts: [{name: data, mountPath: /k6d-data, readOnly: true}]
  volumes:
    - {name: data, configMap: {name: ${files}}}
`) as PodPatch;
    const seen: Array<Record<string, unknown>> = [];
    const { result, error, logs } = await run(
      script,
      { podPatch, placement: { ...DEDICATED_PLACEMENT, spread: 'none' } },
      async (pods) => {
        for (const pod of pods) {
          const pid = containerPid(pod, 'k6');
          seen.push({
            node: pod.spec!.nodeName,
            label: pod.metadata!.labels!.patched,
            init: pod.status!.initContainerStatuses!.map((c) => [c.name, c.state?.terminated?.exitCode]),
            file: readFileSync(`/proc/${pid}/root/k6d-data/note.txt`, 'utf8'),
            env: readFileSync(`/proc/${pid}/environ`, 'utf8')
              .split('\0')
              .includes('FROM_ENVFROM=hello-envfrom'),
          });
        }
      },
    );
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
    expect(seen).toEqual(
      [0, 1].map(() => ({ node, label: 'yes', init: [['init', 0]], file: 'mounted', env: true })),
    );
    expect(result!.runners.map((r) => r.node)).toEqual([node, node]);
    // What the script saw, from the requests it sent, and its checks (not vacuous: some ran).
    const sent = target.arrivals.filter((a) => a.path === '/patched');
    expect(sent.length).toBeGreaterThan(0);
    expect(new Set(sent.map((a) => a.runner))).toEqual(new Set(['hello-envfrom|from-volume/1']));
    expect(result!.metrics.checks!.values).toMatchObject({ rate: 1, fails: 0 });
    expect(result!.rootGroup.checks.map((c) => [c.name, c.passes > 0, c.fails])).toEqual([
      ['envFrom reached the script', true, 0],
      ['the volume reached k6', true, 0],
    ]);
    // The patch loosens nothing (the init container got the hardened securityContext): no warning.
    expect(logs.filter((l) => l.includes('loosens'))).toEqual([]);
  });
});
