import type {
  V1ConfigMap,
  V1Container,
  V1Pod,
  V1SecurityContext,
  V1Toleration,
} from '@kubernetes/client-node';
import { SUMMARY_OUT_ENV } from '../../k6/entry.ts';
import { intervalMetricsEnv, type RunnerPlan, type RunPlan, runnerArgs, runnerEnv } from '../../plan.ts';
import { barrierRunArgs, barrierScript } from './barrier/script.ts';
import {
  BARRIER_PORT,
  CONTAINERS,
  LABELS,
  PATHS,
  RECEIVER_PORT,
  REST_PORT,
  runName,
  VOLUMES,
} from './names.ts';
import type { Resources, RunObjectOptions } from './options.ts';
import { applyPodPatch, CONTAINER_SECURITY, POD_SECURITY } from './pod-patch.ts';

/**
 * The Kubernetes objects of one run, as plain data (no API calls here):
 * - one ConfigMap holding the k6 archive: the run's root object, labelled with the run id;
 * - one Pod per runner (restartPolicy Never), each owned by the ConfigMap, so that deleting the
 *   ConfigMap removes the Pods (Kubernetes garbage collection:
 *   https://kubernetes.io/docs/concepts/architecture/garbage-collection/).
 * Runner Pods are hardened: non-root, read-only root filesystem, no service-account token, every
 * capability dropped, no privilege escalation, the RuntimeDefault seccomp profile (the
 * `restricted` Pod Security Standard: https://kubernetes.io/docs/concepts/security/pod-security-standards/).
 * Nothing needs a shell in the image: the containers run `k6` itself, so a distroless xk6 image
 * works. Each runner Pod has two containers:
 * - `k6`: `k6 run --paused`, its entry module's compact summary written to its own stdout, so it
 *   reaches the Pod log, the one thing the API server lets us read from a finished container;
 * - `barrier`: a second `k6 run` of a tiny script (in the run's ConfigMap) that polls the runner's
 *   REST API on 127.0.0.1 and prints, to its own log, when the runner is at status 4
 *   (PausedBeforeRun), its VU count while the test runs, and the end of its test, then exits 0.
 *   The orchestrator follows that log (one request per runner for the whole run), so neither the
 *   barrier nor the monitor polls the runners through the API server. (An HTTP readinessProbe
 *   cannot carry the barrier: k6's `/v1/status` answers 200 at every status, and no k6 endpoint
 *   fails before status 4.)
 * With the interval receiver (`receiverImage`), a third container comes last: `interval-receiver`,
 * Node on receiver/main.ts, which takes k6's per-interval histograms on 127.0.0.1 and prints them
 * once k6 is gone ({@link receiverContainer}).
 */

/**
 * Resources of the barrier container when none are given: one idle VU polling loopback, 10 times
 * a second until ready, 10 times a second (its own mailbox) from then to the start, and twice a
 * second after.
 */
export const BARRIER_RESOURCES: Resources = {
  requests: { cpu: '10m', memory: '32Mi' },
  limits: { memory: '256Mi' },
};

/**
 * Resources of the interval receiver (receiver/main.ts): Node idle but for one push a second at
 * most, holding a few hundred bytes per push.
 */
export const RECEIVER_RESOURCES: Resources = {
  requests: { cpu: '10m', memory: '48Mi' },
  limits: { memory: '256Mi' },
};

/** The largest archive a ConfigMap holds: the API server refuses objects over 1 MiB (etcd's request limit is ~1.5 MiB). */
export const MAX_ARCHIVE_BYTES = 1024 * 1024 - 16 * 1024;

/** Everything the manifests need: the run's object options and its plan. */
export interface RunSpec extends RunObjectOptions {
  plan: RunPlan;
  /**
   * The interval receiver's program (receiver/script.ts), when the run has one: with
   * `receiverImage` and the plan's `intervalMetrics`, each runner Pod gets the receiver.
   */
  receiverScript?: string;
}

/** Whether the run's Pods have an interval receiver: its image, its program and a plan that pushes. */
export function hasReceiver(spec: RunSpec): boolean {
  return Boolean(spec.receiverImage && spec.receiverScript && spec.plan.intervalMetrics);
}

/** Labels of every object of the run. */
export function runLabels(spec: Pick<RunSpec, 'runId' | 'labels'>): Record<string, string> {
  return {
    ...spec.labels,
    [LABELS.app]: 'k6-distributed',
    [LABELS.managedBy]: 'k6-distributed',
    [LABELS.runId]: spec.runId,
  };
}

/** The ConfigMap holding the archive (`binaryData`, base64 as the API wants it) and the barrier script. */
export function archiveConfigMap(spec: RunSpec, archive: Buffer): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: runName(spec.runId), namespace: spec.namespace, labels: runLabels(spec) },
    // The runners' k6 options from plan.ts (runnerEnv: the quantile grid, about 9 KB), here once
    // rather than in every runner Pod (see runnerPod).
    data: {
      'barrier.js': barrierScript(),
      ...(hasReceiver(spec) ? { 'interval-receiver.cjs': spec.receiverScript! } : {}),
      ...runnerEnv(spec.plan),
    },
    binaryData: { 'archive.tar': archive.toString('base64') },
  };
}

/**
 * Tolerations of the taints the node lifecycle controller puts on a node that stops reporting
 * (`node.kubernetes.io/unreachable`) or reports NotReady (`node.kubernetes.io/not-ready`), for 0 s:
 * the taint-eviction controller then deletes the runner's Pod as soon as its node is tainted (a
 * `DisruptionTarget` condition with reason `DeletionByTaintManager`), so the run learns within
 * the controller's grace period (`--node-monitor-grace-period`, 50 s by default) that the node is
 * lost, instead of after the 300 s the DefaultTolerationSeconds admission plugin would give.
 * (https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-based-evictions)
 */
export const NODE_LOST_TOLERATIONS: readonly V1Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
];

function placementOf(spec: RunSpec) {
  const { placement } = spec;
  const selector = { matchLabels: { [LABELS.runId]: spec.runId } };
  const own = placement.tolerations ?? [];
  return {
    ...(placement.nodeSelector && Object.keys(placement.nodeSelector).length > 0
      ? { nodeSelector: placement.nodeSelector }
      : {}),
    // The user's own tolerations of the node lifecycle taints win.
    tolerations: [...own, ...NODE_LOST_TOLERATIONS.filter((t) => !own.some((o) => o.key === t.key))],
    ...(placement.spread === 'one-per-node'
      ? {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { labelSelector: selector, topologyKey: 'kubernetes.io/hostname' },
              ],
            },
          },
        }
      : {}),
    ...(placement.spread === 'even'
      ? {
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: selector,
            },
          ],
        }
      : {}),
  };
}

/**
 * The Pod of one runner, named `<run>-<index>`, owned by the run's ConfigMap, never restarted
 * (`restartPolicy: Never`). Its k6 container runs `k6 <k6 run args>` (argv words, no shell; k6 is
 * PID 1 and handles SIGTERM itself), its barrier container `k6 run <barrier.js>`.
 * A bare Pod rather than a Job: the orchestrator creates, watches and deletes each runner itself,
 * and a runner must never be replaced, so a Job controller would add only API requests (its
 * status updates, the `batch.kubernetes.io/job-tracking` finalizer it sets and releases on every
 * Pod, its events) and a wait at the cleanup for those finalizers at its `--kube-api-qps`.
 * The user's `pod-patch` is merged last (pod-patch.ts `applyPodPatch`).
 * @param owner the run's ConfigMap as created (its `uid` makes it the Pod's owner).
 * @throws ConfigurationError naming `pod-patch` when the patch changes a field k6-distributed owns.
 */
export function runnerPod(spec: RunSpec, runner: RunnerPlan, owner: { name: string; uid: string }): V1Pod {
  const labels = { ...runLabels(spec), [LABELS.runner]: String(runner.index) };
  // No `--summary-export`: the runner's summary is the compact one its entry module's handleSummary
  // prints to stdout, into the Pod log ({@link extractSummary}), and an export in the Pod's scratch
  // folder could not be read (both on stdout broke both: k6 writes them through two file handles
  // of one pipe, and a run lost runner 0's summary to the interleaving). Not writing it saves each
  // runner about 25 ms of CPU at its end (measured with the quantile grid's 972 trend stats).
  const args = runnerArgs(spec.plan, runner, { archive: PATHS.archive, address: `0.0.0.0:${REST_PORT}` });
  const securityContext = structuredClone(CONTAINER_SECURITY);
  const env = [
    { name: 'K6_NO_USAGE_REPORT', value: 'true' },
    { name: 'TMPDIR', value: PATHS.workDir },
    { name: 'K6D_RUNNER_INDEX', value: String(runner.index) },
    // The entry module's handleSummary prints the compact summary to stdout: the Pod log.
    { name: SUMMARY_OUT_ENV, value: 'stdout' },
    { name: 'K6D_RUNNERS', value: String(spec.plan.runners.length) },
    // From the run's ConfigMap, by reference: the value (about 9 KB) would make up most of every
    // runner Pod object, which the API server serializes, stores and sends to every watcher at
    // each change of the Pod, and which this process parses from each watch event.
    ...Object.keys(runnerEnv(spec.plan)).map((name) => ({
      name,
      valueFrom: { configMapKeyRef: { name: runName(spec.runId), key: name } },
    })),
    ...(spec.env ?? []).map((e) =>
      'value' in e
        ? { name: e.name, value: e.value }
        : { name: e.name, valueFrom: { secretKeyRef: { name: e.secret, key: e.key } } },
    ),
    // The `-e` values last: they win, as in k6. In the Pod's environment, never in its args.
    ...Object.entries(spec.plan.env ?? {}).map(([name, value]) => ({ name, value })),
    // But for the output that feeds the interval receiver: its URL, and the user's K6_FEATURES
    // with `native-histograms` added.
    ...(hasReceiver(spec) ? receiverEnv(spec, runner.index) : []),
  ];
  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${runName(spec.runId)}-${runner.index}`,
      namespace: spec.namespace,
      labels,
      ...(spec.podAnnotations && Object.keys(spec.podAnnotations).length > 0
        ? { annotations: spec.podAnnotations }
        : {}),
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid, blockOwnerDeletion: false },
      ],
    },
    spec: {
      restartPolicy: 'Never',
      activeDeadlineSeconds: spec.activeDeadlineSeconds,
      automountServiceAccountToken: false,
      ...(spec.serviceAccountName ? { serviceAccountName: spec.serviceAccountName } : {}),
      ...(spec.imagePullSecrets && spec.imagePullSecrets.length > 0
        ? { imagePullSecrets: spec.imagePullSecrets.map((name) => ({ name })) }
        : {}),
      ...(spec.priorityClassName ? { priorityClassName: spec.priorityClassName } : {}),
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 30,
      securityContext: {
        ...structuredClone(POD_SECURITY),
        ...(spec.sysctls && spec.sysctls.length > 0 ? { sysctls: spec.sysctls } : {}),
      },
      ...placementOf(spec),
      containers: [
        {
          name: CONTAINERS.k6,
          image: spec.image,
          command: ['k6', ...args],
          env,
          ports: [{ name: 'k6-api', containerPort: REST_PORT }],
          ...(spec.resources ? { resources: spec.resources } : {}),
          securityContext,
          volumeMounts: [
            { name: VOLUMES.archive, mountPath: PATHS.archiveDir, readOnly: true },
            { name: VOLUMES.work, mountPath: PATHS.workDir },
          ],
        },
        {
          name: CONTAINERS.barrier,
          image: spec.image,
          command: ['k6', ...barrierRunArgs(), PATHS.barrierScript],
          ports: [{ name: 'barrier-api', containerPort: BARRIER_PORT }],
          env: [
            { name: 'K6_NO_USAGE_REPORT', value: 'true' },
            // One VU polling loopback: one Go thread costs about a third less CPU than one per core.
            { name: 'GOMAXPROCS', value: '1' },
            // It says ready once the interval receiver listens too (barrier/script.ts).
            ...(hasReceiver(spec) ? [{ name: 'K6D_RECEIVER_PORT', value: String(RECEIVER_PORT) }] : []),
            { name: 'TMPDIR', value: PATHS.workDir },
          ],
          resources: spec.barrierResources ?? BARRIER_RESOURCES,
          securityContext,
          volumeMounts: [
            { name: VOLUMES.archive, mountPath: PATHS.archiveDir, readOnly: true },
            { name: VOLUMES.work, mountPath: PATHS.workDir },
          ],
        },
        // Last: its start is not on the way to k6's (the kubelet starts them in order).
        ...(hasReceiver(spec) ? [receiverContainer(spec, securityContext)] : []),
      ],
      volumes: [
        { name: VOLUMES.archive, configMap: { name: runName(spec.runId) } },
        { name: VOLUMES.work, emptyDir: { sizeLimit: '256Mi' } },
      ],
    },
  };
  return spec.podPatch ? applyPodPatch(pod, spec.podPatch, spec.podPatchInput ?? 'pod-patch') : pod;
}

/**
 * The runner's k6 environment that points its `experimental-prometheus-rw` output at the Pod's
 * interval receiver on 127.0.0.1 (plan.ts `intervalMetricsEnv`), with the user's `K6_FEATURES`
 * (an `-e` value, or a plain `env` value) kept.
 */
function receiverEnv(spec: RunSpec, index: number): Array<{ name: string; value: string }> {
  const own = spec.env?.find((e) => e.name === 'K6_FEATURES' && 'value' in e);
  const features = spec.plan.env?.K6_FEATURES ?? (own && 'value' in own ? own.value : undefined);
  const plan = {
    ...spec.plan,
    intervalMetrics: { ...spec.plan.intervalMetrics!, url: `http://127.0.0.1:${RECEIVER_PORT}` },
  };
  return Object.entries(intervalMetricsEnv(plan, index, features)).map(([name, value]) => ({ name, value }));
}

/**
 * The interval receiver: a regular container, last in the Pod, running `node` on its program from
 * the run's ConfigMap. Not a native sidecar (an init container with `restartPolicy: Always`): the
 * kubelet starts the containers after one only at its next look at the Pod (its relist, 1 s),
 * measured at about 1 s more per run; the end a sidecar would get in order (after k6) the
 * receiver waits for itself (receiver/main.ts). Last, so that its start is not on the way to k6's
 * (the kubelet starts a Pod's containers one after another): k6 stays paused until every runner is
 * ready, which takes longer; a receiver that still began after its runner's test had started says
 * so, and the series is dropped with a warning. An image that cannot be pulled does not block the
 * runner: its log is then missing, which costs the per-interval series only (receiver/collect.ts).
 */
function receiverContainer(spec: RunSpec, securityContext: V1SecurityContext): V1Container {
  const rw = spec.plan.intervalMetrics!;
  return {
    name: CONTAINERS.receiver,
    image: spec.receiverImage!,
    command: ['node', PATHS.receiverScript],
    env: [
      { name: 'K6D_IV_PORT', value: String(RECEIVER_PORT) },
      { name: 'K6D_IV_RUNNER_PORT', value: String(REST_PORT) },
      { name: 'K6D_IV_METRICS', value: JSON.stringify(rw.metrics ?? []) },
      { name: 'K6D_IV_PUSH_MS', value: String(rw.pushIntervalMs) },
    ],
    resources: RECEIVER_RESOURCES,
    securityContext,
    volumeMounts: [{ name: VOLUMES.archive, mountPath: PATHS.archiveDir, readOnly: true }],
  };
}
