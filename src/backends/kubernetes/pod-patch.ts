import type { V1Pod } from '@kubernetes/client-node';
import { ConfigurationError } from '../../errors.ts';
import { CONTAINERS, LABELS, PATHS, VOLUMES } from './names.ts';
import { isObject, type Json, type JsonObject, PatchError, strategicMerge } from './strategic-merge.ts';

/**
 * The `pod-patch` input: a strategic merge patch (strategic-merge.ts) of every runner Pod, as the
 * k6-operator's `runner` block sets volumes, `envFrom`, affinity, topology spread and init
 * containers. Here: the Pod's patch merge keys, the fields k6-distributed owns (refused), the
 * hardened defaults (kept unless the patch loosens them, which is warned about). A near-leaf: the
 * inputs check a patch with it before anything is created, the manifests apply it.
 */

/** The `pod-patch` input as parsed: a map shaped like a Pod (`metadata`, `spec`), with directives. */
export type PodPatch = JsonObject;

/** The kinds of containers of a PodSpec; each has the same list fields. */
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'];

/** A container's lists with a patch merge key (k8s.io/api core/v1 `Container`'s `patchMergeKey` tags). */
const CONTAINER_KEYS: Record<string, string> = {
  env: 'name',
  ports: 'containerPort',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
};

/** A Pod's lists with a patch merge key (k8s.io/api core/v1 `PodSpec`, `ObjectMeta`); others are replaced whole. */
const POD_KEYS: Record<string, string> = {
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'spec.hostAliases': 'ip',
  'spec.topologySpreadConstraints': 'topologyKey',
  'spec.resourceClaims': 'name',
  'spec.schedulingGates': 'name',
  'metadata.ownerReferences': 'uid',
  ...Object.fromEntries(CONTAINER_LISTS.map((list) => [`spec.${list}`, 'name'])),
  ...Object.fromEntries(
    CONTAINER_LISTS.flatMap((list) =>
      Object.entries(CONTAINER_KEYS).map(([field, key]) => [`spec.${list}.${field}`, key]),
    ),
  ),
};

/** The patch merge key of a Pod's list field (`['spec', 'containers']` -> `name`). */
export function podMergeKey(fields: readonly string[]): string | undefined {
  return POD_KEYS[fields.join('.')];
}

/** The runner Pod's securityContext (the `restricted` Pod Security Standard). */
export const POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: 12345,
  runAsGroup: 12345,
  fsGroup: 12345,
  seccompProfile: { type: 'RuntimeDefault' },
};

/**
 * Every container's securityContext, ours and the patch's own (init containers, sidecars: their
 * own fields win, {@link applyPodPatch}).
 */
export const CONTAINER_SECURITY = {
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

/** A field of the Pod k6-distributed owns: its name as the user reads it, and its value in a Pod. */
type Owned = [field: string, value: (pod: JsonObject) => unknown];

const get = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), value);
const named = (list: unknown, name: string) =>
  Array.isArray(list) ? list.find((e) => isObject(e) && e.name === name) : undefined;
const k6 = (pod: JsonObject) => named(get(pod, 'spec', 'containers'), CONTAINERS.k6);
const ourLabels = (pod: JsonObject) =>
  Object.entries((get(pod, 'metadata', 'labels') as Record<string, string> | undefined) ?? {}).filter(
    ([k]) => k.startsWith('k6-distributed.io/') || (Object.values(LABELS) as string[]).includes(k),
  );

/**
 * The fields the patch may not change, as the manifests set them (manifests.ts `runnerPod`): the k6
 * container (its command and args: the `--paused` start, its archive mount, the environment its
 * summary needs), the barrier container, our labels, the archive's volume, `restartPolicy` (a runner
 * is never restarted) and `activeDeadlineSeconds` (the run's lifetime).
 */
const OWNED: Owned[] = [
  ['metadata.name', (pod) => get(pod, 'metadata', 'name')],
  ['metadata.namespace', (pod) => get(pod, 'metadata', 'namespace')],
  ['metadata.ownerReferences', (pod) => get(pod, 'metadata', 'ownerReferences')],
  ['metadata.labels (k6-distributed.io/*, app.kubernetes.io/name, managed-by)', ourLabels],
  ['spec.restartPolicy', (pod) => get(pod, 'spec', 'restartPolicy')],
  ['spec.activeDeadlineSeconds', (pod) => get(pod, 'spec', 'activeDeadlineSeconds')],
  [`spec.containers[${CONTAINERS.k6}]`, (pod) => k6(pod) !== undefined],
  [`spec.containers[${CONTAINERS.k6}].command`, (pod) => get(k6(pod), 'command')],
  [`spec.containers[${CONTAINERS.k6}].args`, (pod) => get(k6(pod), 'args')],
  [
    `spec.containers[${CONTAINERS.k6}].env (K6D_*, TMPDIR, K6_SUMMARY_*)`,
    (pod) =>
      ((get(k6(pod), 'env') as JsonObject[] | undefined) ?? []).filter((e) =>
        /^(K6D_|K6_SUMMARY_|TMPDIR$)/.test(String(e.name)),
      ),
  ],
  [
    `spec.containers[${CONTAINERS.k6}].volumeMounts[${PATHS.archiveDir}]`,
    (pod) =>
      ((get(k6(pod), 'volumeMounts') as JsonObject[] | undefined) ?? []).filter(
        (m) => m.name === VOLUMES.archive || m.mountPath === PATHS.archiveDir,
      ),
  ],
  [
    `spec.containers[${CONTAINERS.barrier}]`,
    (pod) => named(get(pod, 'spec', 'containers'), CONTAINERS.barrier),
  ],
  [`spec.volumes[${VOLUMES.archive}]`, (pod) => named(get(pod, 'spec', 'volumes'), VOLUMES.archive)],
];

/**
 * The first field k6-distributed owns that `patched` changed from `base`, or undefined.
 * @returns the field as the user reads it, e.g. `spec.containers[k6].command`.
 */
export function changedOwnedField(base: JsonObject, patched: JsonObject): string | undefined {
  return OWNED.find(([, value]) => JSON.stringify(value(base)) !== JSON.stringify(value(patched)))?.[0];
}

/**
 * A Pod with every field {@link OWNED} covers, as the manifests set them (the values stand in for
 * the run's own): what the inputs check a patch against before any run exists.
 */
function ownedSkeleton(): JsonObject {
  const mount = { name: VOLUMES.archive, mountPath: PATHS.archiveDir, readOnly: true };
  return {
    metadata: {
      name: 'k6d-run-0',
      namespace: 'ns',
      labels: Object.fromEntries(Object.values(LABELS).map((k) => [k, 'x'])),
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'k6d-run', uid: 'uid' }],
    },
    spec: {
      restartPolicy: 'Never',
      activeDeadlineSeconds: 1,
      containers: [
        {
          name: CONTAINERS.k6,
          command: ['k6', 'run', '--paused'],
          env: ['K6D_RUNNER_INDEX', 'K6D_SUMMARY_OUT', 'K6_SUMMARY_TREND_STATS', 'TMPDIR'].map((name) => ({
            name,
            value: 'x',
          })),
          volumeMounts: [mount],
        },
        { name: CONTAINERS.barrier, command: ['k6', 'run'], volumeMounts: [mount] },
      ],
      volumes: [{ name: VOLUMES.archive, configMap: { name: 'k6d-run' } }],
    },
  };
}

/**
 * Checks a `pod-patch` before anything is created: that it merges into a Pod as Kubernetes would
 * merge it, touches only `metadata.labels`, `metadata.annotations` and `spec`, and changes no field
 * k6-distributed owns ({@link OWNED}).
 * @param input the input as the user names it (`pod-patch`, `--pod-patch`).
 * @throws ConfigurationError one line naming `input` and the field.
 */
export function checkPodPatch(patch: PodPatch, input: string): void {
  for (const key of Object.keys(patch)) {
    if (key !== 'metadata' && key !== 'spec')
      throw new ConfigurationError(`${input}: ${key} cannot be patched (only metadata and spec)`);
  }
  const metadata = patch.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (!isObject(metadata)) throw new ConfigurationError(`${input}: metadata must be a map`);
    const other = Object.keys(metadata).find((k) => k !== 'labels' && k !== 'annotations');
    if (other)
      throw new ConfigurationError(
        `${input}: metadata.${other} is set by k6-distributed (only metadata.labels and metadata.annotations can be patched)`,
      );
  }
  applyPodPatch(ownedSkeleton(), patch, input);
}

/**
 * `patch` merged into the runner Pod `pod` (strategic merge, {@link podMergeKey}). Containers and
 * init containers the patch adds get {@link CONTAINER_SECURITY} under their own securityContext.
 * @param input the input as the user names it, for errors.
 * @throws ConfigurationError naming `input` and the field: a patch Kubernetes would refuse, or one
 *   that changes a field k6-distributed owns.
 */
export function applyPodPatch<T extends object>(pod: T, patch: PodPatch, input: string): T {
  const base = pod as unknown as JsonObject;
  let merged: Json | undefined;
  try {
    merged = strategicMerge(base, patch, podMergeKey);
  } catch (error) {
    if (error instanceof PatchError) throw new ConfigurationError(`${input}: ${error.message}`);
    throw error;
  }
  if (!isObject(merged))
    throw new ConfigurationError(`${input}: the Pod itself cannot be deleted or replaced`);
  const owned = changedOwnedField(base, merged);
  if (owned)
    throw new ConfigurationError(`${input}: ${owned} is set by k6-distributed and cannot be patched`);
  for (const list of CONTAINER_LISTS) {
    const ours = ((get(base, 'spec', list) as JsonObject[] | undefined) ?? []).map((c) => c.name);
    for (const c of (get(merged, 'spec', list) as JsonObject[] | undefined) ?? []) {
      if (!ours.includes(c.name))
        c.securityContext = { ...CONTAINER_SECURITY, ...(c.securityContext as object) } as JsonObject;
    }
  }
  return merged as unknown as T;
}

/**
 * What a patched runner Pod loosened of the hardened defaults ({@link POD_SECURITY},
 * {@link CONTAINER_SECURITY}, no service-account token, no host namespaces or host paths), as
 * field names (`spec.containers[k6].securityContext.readOnlyRootFilesystem`); empty when none.
 */
export function loosenedDefaults(pod: V1Pod): string[] {
  const spec = pod.spec;
  const out: string[] = [];
  if (!spec) return out;
  if (spec.automountServiceAccountToken !== false) out.push('spec.automountServiceAccountToken');
  for (const host of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (spec[host] === true) out.push(`spec.${host}`);
  }
  const podContext = spec.securityContext;
  if (podContext?.runAsNonRoot !== true) out.push('spec.securityContext.runAsNonRoot');
  if (podContext?.runAsUser === 0) out.push('spec.securityContext.runAsUser');
  if (podContext?.seccompProfile?.type !== 'RuntimeDefault') out.push('spec.securityContext.seccompProfile');
  for (const v of spec.volumes ?? []) if (v.hostPath) out.push(`spec.volumes[${v.name}].hostPath`);
  for (const list of ['containers', 'initContainers'] as const) {
    for (const c of spec[list] ?? []) {
      const at = `spec.${list}[${c.name}].securityContext`;
      const s = c.securityContext;
      if (s?.readOnlyRootFilesystem !== true) out.push(`${at}.readOnlyRootFilesystem`);
      if (s?.allowPrivilegeEscalation !== false) out.push(`${at}.allowPrivilegeEscalation`);
      if (s?.privileged === true) out.push(`${at}.privileged`);
      if (s?.runAsNonRoot === false) out.push(`${at}.runAsNonRoot`);
      if (s?.runAsUser === 0) out.push(`${at}.runAsUser`);
      if (s?.seccompProfile && s.seccompProfile.type !== 'RuntimeDefault') out.push(`${at}.seccompProfile`);
      if (!s?.capabilities?.drop?.includes('ALL') || (s.capabilities.add ?? []).length > 0)
        out.push(`${at}.capabilities`);
    }
  }
  return out;
}
