import { describe, expect, it } from 'vitest';
import { readRunInputs } from '../../../../src/actions/run/inputs.ts';
import {
  archiveConfigMap,
  BARRIER_RESOURCES,
  NODE_LOST_TOLERATIONS,
  runnerPod,
} from '../../../../src/backends/kubernetes/manifests.ts';
import { LABELS } from '../../../../src/backends/kubernetes/names.ts';
import { planRun } from '../../../../src/run/plan.ts';

const spec = {
  runId: 'rtest1',
  namespace: 'load',
  image: 'grafana/k6:2.2.0',
  plan: planRun({ runners: 4, maxVUs: 40 }),
  placement: {
    nodeSelector: { pool: 'loadtest' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'loadtest', effect: 'NoSchedule' }],
    spread: 'one-per-node' as const,
  },
  env: [{ name: 'TOKEN', secret: 'api', key: 'token' }],
  activeDeadlineSeconds: 3600,
};

describe('runner Pod manifest', () => {
  const manifest = runnerPod(spec, spec.plan.runners[2]!, { name: 'k6d-rtest1', uid: 'u-1' });
  const pod = manifest.spec!;
  const container = pod.containers[0]!;

  it('runs k6 itself (no shell) on segment 2/4:3/4 paused, the REST API on all interfaces, the archive last', () => {
    const args = container.command!;
    expect(args[0]).toBe('k6');
    const k6 = args.slice(1);
    expect(k6.slice(0, 4)).toEqual(['run', '--paused', '--address', '0.0.0.0:6565']);
    // The compact summary is the one on stdout (the Pod log); no export nobody could read.
    expect(k6).not.toContain('--summary-export');
    expect(container.env).toContainEqual({ name: 'K6D_SUMMARY_OUT', value: 'stdout' });
    expect(k6[k6.indexOf('--execution-segment') + 1]).toBe('2/4:3/4');
    expect(k6[k6.indexOf('--execution-segment-sequence') + 1]).toBe('0,1/4,2/4,3/4,1');
    expect(k6.at(-1)).toBe('/k6d/archive/archive.tar');
  });

  it("takes the quantile grid from the run's ConfigMap, so the Pod object stays a few KB", () => {
    // The grid (about 9 KB) would make up most of every Pod object the API server stores and sends
    // to each watcher at each change of the Pod.
    expect(container.env).toContainEqual({
      name: 'K6_SUMMARY_TREND_STATS',
      valueFrom: { configMapKeyRef: { name: 'k6d-rtest1', key: 'K6_SUMMARY_TREND_STATS' } },
    });
    const cm = archiveConfigMap(spec, Buffer.from('tar'));
    expect(cm.metadata!.name).toBe('k6d-rtest1');
    expect(cm.data!.K6_SUMMARY_TREND_STATS).toBe(spec.plan.trendStats);
    expect(JSON.stringify(manifest).length).toBeLessThan(4096);
  });

  it('is never restarted, ends at its deadline, and is hardened, both containers', () => {
    expect(manifest.kind).toBe('Pod');
    expect(manifest.metadata!.name).toBe('k6d-rtest1-2');
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.activeDeadlineSeconds).toBe(3600);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.containers.map((c) => c.name)).toEqual(['k6', 'barrier']);
    for (const c of pod.containers) {
      expect(c.securityContext).toEqual({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
    }
  });

  it("has a barrier container that runs the ConfigMap's barrier script with k6, with small default resources", () => {
    const barrier = pod.containers[1]!;
    expect(barrier.command![0]).toBe('k6');
    expect(barrier.command!.at(-1)).toBe('/k6d/archive/barrier.js');
    // Its lines alone, unadorned, on the log the backend follows.
    expect(barrier.command).toEqual(expect.arrayContaining(['--log-output=stdout', '--log-format=raw']));
    // Its own REST API, the start-time mailbox, on the Pod's IP where the pod proxy reaches it.
    expect(barrier.command!.join(' ')).toContain('--address 0.0.0.0:6566');
    expect(barrier.ports).toEqual([{ name: 'barrier-api', containerPort: 6566 }]);
    expect(barrier.resources).toEqual(BARRIER_RESOURCES);
    const cm = archiveConfigMap(spec, Buffer.from('tar'));
    expect(cm.data!['barrier.js']).toContain("const STATUS = 'http://127.0.0.1:6565/v1/status';");
    expect(cm.data!['barrier.js']).toContain("const MAILBOX = 'http://127.0.0.1:6566/v1/setup';");
    expect(cm.binaryData!['archive.tar']).toBe(Buffer.from('tar').toString('base64'));
  });

  it('carries the Pod options: pull secrets, service account, annotations, labels, priority, resources', () => {
    const custom = runnerPod(
      {
        ...spec,
        imagePullSecrets: ['regcred'],
        serviceAccountName: 'k6-runner',
        podAnnotations: { 'sidecar.istio.io/inject': 'false' },
        labels: { team: 'perf' },
        priorityClassName: 'load-test',
        resources: { limits: { memory: '1Gi' } },
        barrierResources: { limits: { memory: '64Mi' } },
      },
      spec.plan.runners[0]!,
      { name: 'k6d-rtest1', uid: 'u-1' },
    );
    const p = custom.spec!;
    expect(p.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(p.serviceAccountName).toBe('k6-runner');
    expect(p.automountServiceAccountToken).toBe(false);
    expect(p.priorityClassName).toBe('load-test');
    expect(custom.metadata!.annotations).toEqual({ 'sidecar.istio.io/inject': 'false' });
    expect(custom.metadata!.labels).toMatchObject({ team: 'perf' });
    expect(p.containers.map((c) => c.resources)).toEqual([
      { limits: { memory: '1Gi' } },
      { limits: { memory: '64Mi' } },
    ]);
    // None of them unless asked for.
    expect(pod.imagePullSecrets).toBeUndefined();
    expect(pod.serviceAccountName).toBeUndefined();
    expect(pod.priorityClassName).toBeUndefined();
    expect(manifest.metadata!.annotations).toBeUndefined();
  });

  it('is owned by the run ConfigMap and labelled with the run id and runner', () => {
    expect(manifest.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'ConfigMap', uid: 'u-1' }),
    ]);
    expect(manifest.metadata!.labels).toMatchObject({
      [LABELS.runId]: 'rtest1',
      [LABELS.runner]: '2',
    });
  });

  it('places runners on the dedicated nodes, never two on one node', () => {
    expect(pod.nodeSelector).toEqual({ pool: 'loadtest' });
    // The user's tolerations, then those that make a lost node's runner Pods go at once.
    expect(pod.tolerations).toEqual([...spec.placement.tolerations!, ...NODE_LOST_TOLERATIONS]);
    expect(pod.affinity!.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution![0]).toEqual({
      labelSelector: { matchLabels: { [LABELS.runId]: 'rtest1' } },
      topologyKey: 'kubernetes.io/hostname',
    });
  });

  it('passes Secret references, not values', () => {
    expect(container.env).toContainEqual({
      name: 'TOKEN',
      valueFrom: { secretKeyRef: { name: 'api', key: 'token' } },
    });
    expect(container.env).toContainEqual({ name: 'K6D_RUNNER_INDEX', value: '2' });
  });

  it("gives -e values in the Pod's environment, last so they win, never on k6's command line", () => {
    const withEnv = { ...spec, plan: planRun({ runners: 4, maxVUs: 40, env: { API_KEY: 'k-123' } }) };
    const c = runnerPod(withEnv, withEnv.plan.runners[0]!, { name: 'k6d-rtest1', uid: 'u-1' }).spec!
      .containers[0]!;
    expect(c.env!.at(-1)).toEqual({ name: 'API_KEY', value: 'k-123' });
    expect(c.command!.join(' ')).not.toContain('k-123');
    expect(c.command).toContain('--include-system-env-vars');
  });
});

describe('run action inputs', () => {
  const inputs = (values: Record<string, string>) => readRunInputs((name) => values[name] ?? '');

  it('reads placement, env and defaults', () => {
    const i = inputs({
      script: 'load.js',
      runners: '4',
      'node-selector': 'pool=loadtest\n# comment\n',
      tolerations: '- {key: dedicated, operator: Equal, value: loadtest, effect: NoSchedule}',
      env: 'BASE_URL=https://x.example/a=b',
      'secret-env': 'TOKEN=api/token',
      resources: '{requests: {cpu: 2, memory: 1Gi}}',
    });
    expect(i.config.runners).toBe(4);
    expect(i.backend).toBe('kubernetes');
    expect(i.image).toBe('grafana/k6:2.2.0');
    expect(i.nodeSelector).toEqual({ pool: 'loadtest' });
    expect(i.tolerations).toHaveLength(1);
    expect(i.env).toEqual([
      { name: 'BASE_URL', value: 'https://x.example/a=b' },
      { name: 'TOKEN', secret: 'api', key: 'token' },
    ]);
    expect(i.resources).toEqual({ requests: { cpu: '2', memory: '1Gi' } });
    expect(i.spread).toBe('one-per-node');
    expect(i.cleanup).toBe('always');
  });

  it.each([
    [{ script: 'a.js', spread: 'random' }, 'spread: "random" is not one of one-per-node, even, none'],
    [{ script: 'a.js', tolerations: '- {key: a, operator: Maybe}' }, /^tolerations: 0\.operator: /],
    [{ script: 'a.js', 'node-selector': 'pool' }, 'node-selector: "pool" is not KEY=value'],
    [{ script: 'a.js', 'secret-env': 'A=nokey' }, 'secret-env: "A=nokey" must be NAME=secret-name/key'],
    [{ script: 'a.js', namespace: 'Load_Tests' }, 'namespace: "Load_Tests" is not a valid namespace name'],
    [{ script: 'a.js', runners: '-2' }, 'runners: must be at least 1'],
    [{ script: 'a.js', cleanup: 'sometimes' }, /^cleanup: /],
    [{ script: 'a.js', sysctls: 'net ipv4.x=1' }, 'sysctls: "net ipv4.x" is not a sysctl name'],
  ])('refuses %o', (values, message) => {
    expect(() => inputs(values)).toThrowError(message);
  });
});

describe('the interval receiver', () => {
  const withReceiver = {
    ...spec,
    env: [...spec.env, { name: 'K6_FEATURES', value: 'some-feature' }],
    receiverImage: 'node:24-slim',
    receiverScript: '/* receiver */',
    plan: {
      ...spec.plan,
      intervalMetrics: {
        url: 'http://127.0.0.1',
        pushIntervalMs: 100,
        metrics: ['http_req_duration{name:a}'],
      },
    },
  };

  it("is the Pod's last container (its start not on the way to k6's), running node on its program from the run's ConfigMap, hardened as the others", () => {
    const pod = runnerPod(withReceiver, withReceiver.plan.runners[1]!, { name: 'k6d-rtest1', uid: 'u-1' })
      .spec!;
    expect(pod.containers.map((c) => c.name)).toEqual(['k6', 'barrier', 'interval-receiver']);
    expect(pod.initContainers).toBeUndefined();
    const [k6, , receiver] = pod.containers;
    expect(receiver).toMatchObject({
      name: 'interval-receiver',
      image: 'node:24-slim',
      command: ['node', '/k6d/archive/interval-receiver.cjs'],
    });
    expect(receiver!.env).toContainEqual({ name: 'K6D_IV_METRICS', value: '["http_req_duration{name:a}"]' });
    expect(receiver!.env).toContainEqual({ name: 'K6D_IV_PUSH_MS', value: '100' });
    expect(receiver!.env).toContainEqual({ name: 'K6D_IV_RUNNER_PORT', value: '6565' });
    expect(receiver!.securityContext).toEqual(k6!.securityContext);
    // The barrier says ready once it listens too.
    expect(pod.containers[1]!.env).toContainEqual({ name: 'K6D_RECEIVER_PORT', value: '6567' });
    expect(archiveConfigMap(withReceiver, Buffer.from('tar')).data!['interval-receiver.cjs']).toBe(
      '/* receiver */',
    );
  });

  it("points the runner's remote-write output at it on loopback, the user's K6_FEATURES kept", () => {
    const pod = runnerPod(withReceiver, withReceiver.plan.runners[1]!, { name: 'k6d-rtest1', uid: 'u-1' })
      .spec!;
    const k6 = pod.containers.find((c) => c.name === 'k6')!;
    expect(k6.command).toContain('experimental-prometheus-rw');
    expect(k6.env).toContainEqual({ name: 'K6_PROMETHEUS_RW_SERVER_URL', value: 'http://127.0.0.1:6567/1' });
    // Last, so that it wins over the user's own value, which it holds.
    const features = k6.env!.filter((e) => e.name === 'K6_FEATURES');
    expect(features.at(-1)).toEqual({ name: 'K6_FEATURES', value: 'some-feature,native-histograms' });
  });

  it('is absent without an image or a program, and then nothing pushes', () => {
    for (const off of [
      { ...withReceiver, receiverImage: undefined },
      { ...withReceiver, receiverScript: undefined },
    ]) {
      const pod = runnerPod(off, off.plan.runners[0]!, { name: 'k6d-rtest1', uid: 'u-1' }).spec!;
      expect(pod.containers.map((c) => c.name)).toEqual(['k6', 'barrier']);
      expect(pod.containers[0]!.env!.map((e) => e.name)).not.toContain('K6_PROMETHEUS_RW_SERVER_URL');
      expect(archiveConfigMap(off, Buffer.from('tar')).data!['interval-receiver.cjs']).toBeUndefined();
    }
  });
});
