import type { V1ConfigMap, V1Job, V1Toleration } from '@kubernetes/client-node';
import { type RunnerPlan, type RunPlan, runnerArgs } from '../../run/plan.ts';

/**
 * The Kubernetes objects of one run, as plain data (no API calls here):
 * - one ConfigMap holding the k6 archive: the run's root object, labelled with the run id;
 * - one Job per runner (backoffLimit 0, restartPolicy Never), each owned by the ConfigMap, so that
 *   deleting the ConfigMap removes the Jobs and, through them, the Pods (Kubernetes garbage
 *   collection: https://kubernetes.io/docs/concepts/architecture/garbage-collection/).
 * Runner Pods are hardened: non-root, read-only root filesystem, no service-account token, every
 * capability dropped, no privilege escalation, the RuntimeDefault seccomp profile.
 */

/** Label keys every object of a run carries. */
export const LABELS = {
  app: 'app.kubernetes.io/name',
  managedBy: 'app.kubernetes.io/managed-by',
  runId: 'k6-distributed.io/run-id',
  runner: 'k6-distributed.io/runner',
} as const;

/** The port of every runner's k6 REST API inside its Pod. */
export const REST_PORT = 6565;

/** Where the archive and the scratch folder are mounted in a runner's container. */
export const PATHS = {
  archiveDir: '/k6d/archive',
  archive: '/k6d/archive/archive.tar',
  workDir: '/k6d/work',
  summary: '/k6d/work/summary.json',
} as const;

/** The largest archive a ConfigMap holds: the API server refuses objects over 1 MiB (etcd's request limit is ~1.5 MiB). */
export const MAX_ARCHIVE_BYTES = 1024 * 1024 - 16 * 1024;

/** How runners are spread over nodes. */
export type Spread = 'one-per-node' | 'even' | 'none';

/** Placement of runner Pods on nodes. */
export interface Placement {
  /** Pod `spec.nodeSelector`. */
  nodeSelector?: Record<string, string>;
  /** Pod `spec.tolerations`. */
  tolerations?: V1Toleration[];
  /**
   * `one-per-node`: required Pod anti-affinity on `kubernetes.io/hostname` (no two runners of the
   * run share a node); `even`: a topology spread constraint with maxSkew 1 over hostnames; `none`.
   */
  spread: Spread;
}

/** Container resources as Kubernetes quantities (`cpu: "2"`, `memory: "4Gi"`). */
export interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

/** An env var of the runners: a value, or a key of a Secret. */
export type RunnerEnv = { name: string; value: string } | { name: string; secret: string; key: string };

/** Everything the manifests need. */
export interface RunSpec {
  runId: string;
  namespace: string;
  image: string;
  plan: RunPlan;
  placement: Placement;
  resources?: Resources;
  env?: RunnerEnv[];
  /** Extra labels for every object. */
  labels?: Record<string, string>;
  /**
   * Pod sysctls (`spec.securityContext.sysctls`), e.g. `net.ipv4.ip_local_port_range=1024 65535`
   * for large runs; Kubernetes allows the safe ones everywhere, others only where the kubelet does
   * (https://kubernetes.io/docs/tasks/administer-cluster/sysctl-cluster/).
   */
  sysctls?: Array<{ name: string; value: string }>;
  /** Safety net: Kubernetes ends a runner Job after this many seconds (`activeDeadlineSeconds`). */
  activeDeadlineSeconds: number;
  /** Safety net: Kubernetes deletes a finished runner Job after this many seconds, if set. */
  ttlSecondsAfterFinished?: number;
}

/**
 * The prefix of every summary line in a runner's log. The run id makes a script's own output
 * unable to fake it. Each line carries it because a Pod log merges stdout and stderr in arrival
 * order, so k6's own stderr lines may land between the summary's lines.
 */
export function summaryPrefix(runId: string): string {
  return `k6-distributed-summary ${runId} `;
}

/**
 * The container's shell wrapper: runs k6 with the given arguments, forwards SIGTERM to it (a shell
 * as PID 1 would ignore it), then prints each line of the `--summary-export` file behind
 * {@link summaryPrefix}, and an `end` line, so the summary can be read from the Pod log, and exits
 * with k6's code.
 */
export function wrapperScript(runId: string): string {
  const prefix = summaryPrefix(runId);
  return [
    `trap 'kill -TERM "$pid" 2>/dev/null' TERM INT`,
    'k6 "$@" & pid=$!',
    'wait "$pid"; rc=$?',
    'while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done',
    // k6 writes the file without a final newline: the echo ends its last line.
    `[ -f '${PATHS.summary}' ] && { cat '${PATHS.summary}'; echo; } | sed 's/^/${prefix}| /' && echo '${prefix}end'`,
    'exit "$rc"',
  ].join('\n');
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

/** The name of the run's ConfigMap (and the prefix of its Jobs). */
export function runName(runId: string): string {
  return `k6d-${runId}`;
}

/** The ConfigMap holding the archive (`binaryData`, base64 as the API wants it). */
export function archiveConfigMap(spec: RunSpec, archive: Buffer): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: runName(spec.runId), namespace: spec.namespace, labels: runLabels(spec) },
    binaryData: { 'archive.tar': archive.toString('base64') },
  };
}

function placementOf(spec: RunSpec) {
  const { placement } = spec;
  const selector = { matchLabels: { [LABELS.runId]: spec.runId } };
  return {
    ...(placement.nodeSelector && Object.keys(placement.nodeSelector).length > 0
      ? { nodeSelector: placement.nodeSelector }
      : {}),
    ...(placement.tolerations && placement.tolerations.length > 0
      ? { tolerations: placement.tolerations }
      : {}),
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
 * The Job of one runner. Its container runs `sh -c <wrapper> k6d <k6 run args>`, so the k6
 * arguments are argv words, never re-parsed by a shell.
 * @param owner the run's ConfigMap as created (its `uid` makes it the Job's owner).
 */
export function runnerJob(spec: RunSpec, runner: RunnerPlan, owner: { name: string; uid: string }): V1Job {
  const labels = { ...runLabels(spec), [LABELS.runner]: String(runner.index) };
  const args = runnerArgs(spec.plan, runner, {
    archive: PATHS.archive,
    summary: PATHS.summary,
    address: `0.0.0.0:${REST_PORT}`,
  });
  const env = [
    { name: 'K6_NO_USAGE_REPORT', value: 'true' },
    { name: 'TMPDIR', value: PATHS.workDir },
    { name: 'K6D_RUNNER_INDEX', value: String(runner.index) },
    { name: 'K6D_RUNNERS', value: String(spec.plan.runners.length) },
    ...(spec.env ?? []).map((e) =>
      'value' in e
        ? { name: e.name, value: e.value }
        : { name: e.name, valueFrom: { secretKeyRef: { name: e.secret, key: e.key } } },
    ),
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: `${runName(spec.runId)}-${runner.index}`,
      namespace: spec.namespace,
      labels,
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid, blockOwnerDeletion: false },
      ],
    },
    spec: {
      backoffLimit: 0,
      completions: 1,
      parallelism: 1,
      activeDeadlineSeconds: spec.activeDeadlineSeconds,
      ...(spec.ttlSecondsAfterFinished === undefined
        ? {}
        : { ttlSecondsAfterFinished: spec.ttlSecondsAfterFinished }),
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 12345,
            runAsGroup: 12345,
            fsGroup: 12345,
            seccompProfile: { type: 'RuntimeDefault' },
            ...(spec.sysctls && spec.sysctls.length > 0 ? { sysctls: spec.sysctls } : {}),
          },
          ...placementOf(spec),
          containers: [
            {
              name: 'k6',
              image: spec.image,
              command: ['sh', '-c', wrapperScript(spec.runId), 'k6d', ...args],
              env,
              ports: [{ name: 'k6-api', containerPort: REST_PORT }],
              ...(spec.resources ? { resources: spec.resources } : {}),
              securityContext: {
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'archive', mountPath: PATHS.archiveDir, readOnly: true },
                { name: 'work', mountPath: PATHS.workDir },
              ],
            },
          ],
          volumes: [
            { name: 'archive', configMap: { name: runName(spec.runId) } },
            { name: 'work', emptyDir: { sizeLimit: '256Mi' } },
          ],
        },
      },
    },
  };
}
