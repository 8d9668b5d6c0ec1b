import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createRun, podPatchWarning } from '../../../../src/backends/kubernetes/create.ts';
import { runnerPod } from '../../../../src/backends/kubernetes/manifests.ts';
import {
  checkPodPatch,
  loosenedDefaults,
  type PodPatch,
} from '../../../../src/backends/kubernetes/pod-patch.ts';
import { ConfigurationError } from '../../../../src/errors.ts';
import { smallRunSpec } from './support/fakes.ts';

// The `pod-patch` input: merged into every runner Pod as a strategic merge patch, refused on the
// fields k6-distributed owns, and warned about when it loosens the hardened defaults.

const spec = { ...smallRunSpec('rp1', 2), placement: { spread: 'one-per-node' as const } };
const owner = { name: 'k6d-rp1', uid: 'u' };
const podWith = (podPatch: PodPatch) => runnerPod({ ...spec, podPatch }, spec.plan.runners[1]!, owner);

/** A k6-operator-style runner block, as a patch. */
const OPERATOR_STYLE = parse(`
metadata:
  labels: {team: perf}
  annotations: {example.com/owner: perf}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-3]}]
  topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
  initContainers:
    - name: fetch
      image: busybox
      command: [sh, -c, "echo hi > /data/x"]
      volumeMounts: [{name: data, mountPath: /data}]
  containers:
    - name: k6
      envFrom: [{configMapRef: {name: settings}}]
      volumeMounts: [{name: data, mountPath: /data, readOnly: true}]
  volumes:
    - {name: data, emptyDir: {}}
`) as PodPatch;

describe('a pod-patch merged into a runner Pod', () => {
  const plain = runnerPod(spec, spec.plan.runners[1]!, owner);
  const pod = podWith(OPERATOR_STYLE);
  const k6 = pod.spec!.containers.find((c) => c.name === 'k6')!;

  it('adds volumes, mounts, envFrom, affinity beside ours, topology spread and init containers', () => {
    expect(pod.spec!.volumes!.map((v) => v.name)).toEqual(['data', 'archive', 'work']);
    expect(k6.volumeMounts!.map((m) => m.mountPath)).toEqual(['/data', '/k6d/archive', '/k6d/work']);
    expect(k6.envFrom).toEqual([{ configMapRef: { name: 'settings' } }]);
    // Our anti-affinity (one-per-node) stays: maps merge key by key.
    expect(pod.spec!.affinity!.podAntiAffinity).toEqual(plain.spec!.affinity!.podAntiAffinity);
    expect(
      pod.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms,
    ).toEqual([
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-3'] }] },
    ]);
    expect(pod.spec!.topologySpreadConstraints).toHaveLength(1);
    expect(pod.spec!.initContainers!.map((c) => c.name)).toEqual(['fetch']);
    expect(pod.metadata!.labels).toEqual({ ...plain.metadata!.labels, team: 'perf' });
    expect(pod.metadata!.annotations).toEqual({ 'example.com/owner': 'perf' });
  });

  it('keeps everything it does not name: the k6 command, env, securityContext, the barrier', () => {
    expect(k6.command).toEqual(plain.spec!.containers[0]!.command);
    expect(k6.env).toEqual(plain.spec!.containers[0]!.env);
    expect(k6.securityContext).toEqual(plain.spec!.containers[0]!.securityContext);
    expect(pod.spec!.containers.find((c) => c.name === 'barrier')).toEqual(plain.spec!.containers[1]);
    expect(pod.spec!.restartPolicy).toBe('Never');
  });

  it('gives the containers it adds the hardened securityContext, under their own fields', () => {
    expect(pod.spec!.initContainers![0]!.securityContext).toEqual(k6.securityContext);
    const own = podWith({
      spec: {
        initContainers: [{ name: 'chown', image: 'b', securityContext: { readOnlyRootFilesystem: false } }],
      },
    });
    expect(own.spec!.initContainers![0]!.securityContext).toEqual({
      ...k6.securityContext,
      readOnlyRootFilesystem: false,
    });
  });

  it('loosens nothing, so nothing is warned about', () => {
    expect(loosenedDefaults(plain)).toEqual([]);
    expect(loosenedDefaults(pod)).toEqual([]);
    expect(podPatchWarning({ ...spec, podPatch: OPERATOR_STYLE })).toBeUndefined();
  });
});

describe('a pod-patch that loosens the hardened defaults', () => {
  const LOOSE = parse(`
spec:
  automountServiceAccountToken: true
  hostNetwork: true
  securityContext: {runAsNonRoot: null, runAsUser: 0}
  volumes: [{name: host, hostPath: {path: /var/run}}]
  initContainers: [{name: setup, image: b, securityContext: {runAsNonRoot: false, capabilities: {add: [NET_ADMIN]}}}]
  containers:
    - name: k6
      securityContext: {readOnlyRootFilesystem: false, privileged: true}
`) as PodPatch;

  it('is warned about in one line naming each loosened field, with the input as its user writes it', async () => {
    const expected =
      "--pod-patch loosens the runner Pods' hardened defaults: spec.automountServiceAccountToken, spec.hostNetwork, " +
      'spec.securityContext.runAsNonRoot, spec.securityContext.runAsUser, spec.volumes[host].hostPath, ' +
      'spec.containers[k6].securityContext.readOnlyRootFilesystem, spec.containers[k6].securityContext.privileged, ' +
      'spec.initContainers[setup].securityContext.runAsNonRoot, spec.initContainers[setup].securityContext.capabilities';
    expect(podPatchWarning({ ...spec, podPatch: LOOSE, podPatchInput: '--pod-patch' })).toBe(expected);
    const warnings: string[] = [];
    const api = {
      createNamespacedConfigMap: async ({ body }: { body: V1ConfigMap }) => ({
        ...body,
        metadata: { uid: 'x' },
      }),
      readNamespacedConfigMap: async () => ({}),
      createNamespacedPod: async ({ body }: { body: V1Pod }) => body,
    } as unknown as Parameters<typeof createRun>[0];
    await createRun(api, { ...spec, podPatch: LOOSE }, Buffer.from('a'), {
      warning: (m) => warnings.push(m),
    });
    expect(warnings).toEqual([expected.replace('--pod-patch', 'pod-patch')]);
  });
});

describe('a pod-patch on a field k6-distributed owns', () => {
  it.each([
    ['spec: {containers: [{name: k6, command: [k6, run, x.js]}]}', 'spec.containers[k6].command'],
    ['spec: {containers: [{name: k6, args: [--vus, "5"]}]}', 'spec.containers[k6].args'],
    ['spec: {containers: [{name: k6, $patch: delete}]}', 'spec.containers[k6]'],
    ['spec: {containers: [{$patch: replace}, {name: k6, image: x}]}', 'spec.containers[k6].command'],
    [
      'spec: {containers: [{name: k6, env: [{name: K6D_SUMMARY_OUT, value: /tmp/s}]}]}',
      'spec.containers[k6].env',
    ],
    ['spec: {containers: [{name: k6, env: [{name: TMPDIR, $patch: delete}]}]}', 'spec.containers[k6].env'],
    [
      'spec: {containers: [{name: k6, volumeMounts: [{mountPath: /k6d/archive, name: other}]}]}',
      'volumeMounts[/k6d/archive]',
    ],
    ['spec: {containers: [{name: barrier, image: busybox}]}', 'spec.containers[barrier]'],
    ['spec: {volumes: [{name: archive, emptyDir: {}}]}', 'spec.volumes[archive]'],
    ['spec: {volumes: [{$patch: replace}, {name: data, emptyDir: {}}]}', 'spec.volumes[archive]'],
    ['spec: {restartPolicy: OnFailure}', 'spec.restartPolicy'],
    ['spec: {activeDeadlineSeconds: 99999}', 'spec.activeDeadlineSeconds'],
    ['metadata: {labels: {k6-distributed.io/run-id: other}}', 'metadata.labels'],
    ['metadata: {labels: {k6-distributed.io/new: x}}', 'metadata.labels'],
    ['metadata: {labels: {app.kubernetes.io/managed-by: helm}}', 'metadata.labels'],
    ['metadata: {labels: {$patch: replace, team: perf}}', 'metadata.labels'],
    ['metadata: {name: other}', 'metadata.name'],
    ['metadata: {ownerReferences: []}', 'metadata.ownerReferences'],
    ['kind: Deployment', 'kind cannot be patched'],
    ['$patch: delete', '$patch cannot be patched'],
    ['spec: {$patch: delete}', 'spec.restartPolicy'],
  ])('%s is refused before anything is created, naming pod-patch and %s', async (yaml, field) => {
    const patch = parse(yaml) as PodPatch;
    const refusal = () => checkPodPatch(patch, 'pod-patch');
    expect(refusal).toThrow(ConfigurationError);
    expect(refusal).toThrow(/^pod-patch: /);
    expect(refusal).toThrow(field);
    // The same patch on the real Pod (the backend's own check) fails the same way, before any create.
    const created: string[] = [];
    const api = {
      createNamespacedConfigMap: async () => created.push('cm'),
      createNamespacedPod: async () => created.push('pod'),
    } as unknown as Parameters<typeof createRun>[0];
    // Fields outside metadata.labels, metadata.annotations and spec are refused by the input's check alone.
    if (!/^(kind|\$patch|metadata: \{(name|ownerReferences))/.test(yaml)) {
      await expect(createRun(api, { ...spec, podPatch: patch }, Buffer.from('a'))).rejects.toThrow(field);
      expect(created).toEqual([]);
    }
  });

  it('allows what is not ours: the k6 image, resources, our other env, the work volume, other labels', () => {
    const patch = parse(`
metadata: {labels: {team: perf}}
spec:
  containers: [{name: k6, image: my/k6, resources: {limits: {memory: 1Gi}}, env: [{name: K6_NO_USAGE_REPORT, value: "false"}]}]
  volumes: [{name: work, emptyDir: {sizeLimit: 1Gi}}]
`) as PodPatch;
    expect(() => checkPodPatch(patch, 'pod-patch')).not.toThrow();
    const pod = podWith(patch);
    expect(pod.spec!.containers[0]!.image).toBe('my/k6');
    expect(pod.spec!.volumes!.find((v) => v.name === 'work')!.emptyDir).toEqual({ sizeLimit: '1Gi' });
  });
});
