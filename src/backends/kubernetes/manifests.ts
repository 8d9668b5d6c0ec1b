import type { V1ConfigMap, V1Pod, V1Toleration } from '@kubernetes/client-node';
import { SUMMARY_OUT_ENV } from '../../k6/entry.ts';
import { COMPACT_SUMMARY_FORMAT } from '../../k6/summary.ts';
import { type RunnerPlan, type RunPlan, runnerArgs, runnerEnv } from '../../plan.ts';

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

/**
 * The port of the barrier container's own k6 REST API inside the runner Pod: its start-time
 * mailbox. The orchestrator sets the instant the runner starts as that k6's setup data
 * (`PUT /v1/setup`, `{"startAt": <epoch ms of the node's clock>}`), which the barrier script reads
 * back on loopback (`GET /v1/setup`); k6 v2.2.0 `api/v1/setup_teardown_routes.go` keeps the body
 * as given and answers it under `data.attributes.data`.
 */
export const BARRIER_PORT = 6566;

/** Where the archive and the scratch folder are mounted in a runner's container. */
export const PATHS = {
  archiveDir: '/k6d/archive',
  archive: '/k6d/archive/archive.tar',
  barrierScript: '/k6d/archive/barrier.js',
  workDir: '/k6d/work',
} as const;

/** The container names of a runner Pod. */
export const CONTAINERS = { k6: 'k6', barrier: 'barrier' } as const;

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
 * What the barrier container prints, one line each, to its stdout (the container's log, which the
 * orchestrator follows): `k6d-ready <ms>` once the runner is at status 4 (PausedBeforeRun) or
 * later; `k6d-clock <ms>` at each poll of a {@link VUS_PERIOD_MS} period from then to the start, at
 * most {@link CLOCK_LINES} times (the orchestrator bounds the gap between its clock and the node's
 * by the least delay of these lines); `k6d-started <sent ms> <ms>` once it un-paused the runner
 * itself at the start time set in its mailbox ({@link BARRIER_PORT}): when it sent the `PATCH` and
 * when k6 confirmed it; while its test runs, `k6d-vus <ms> <vus>` at its poll of each
 * {@link VUS_PERIOD_MS} period of the wall clock when the active VU count differs from the last one
 * printed (the first is always printed); `k6d-end <ms> <status>` once its test has ended (status 9
 * Ended, 10 Interrupted, 11 MarkedAsFailed), after which it exits 0. `<ms>` is the node's epoch ms.
 */
export const BARRIER_LINE = {
  ready: 'k6d-ready',
  clock: 'k6d-clock',
  started: 'k6d-started',
  vus: 'k6d-vus',
  end: 'k6d-end',
} as const;

/** How many `k6d-clock` lines a barrier container prints at most (one a period while it waits). */
export const CLOCK_LINES = 10;

/**
 * How often a barrier container looks for its runner's end once the test can end (the `endsFrom`
 * instant in its mailbox, {@link barrierScript}), in ms.
 */
export const END_POLL_MS = 50;

/** How often a ready barrier container reads its mailbox for the start time, in ms. */
export const MAILBOX_POLL_MS = 100;

/**
 * The period of the VU samples the barrier container takes, in ms: twice per period at which k6
 * samples its own `vus` gauge (1 s, k6 v2.2.0 `internal/execution/scheduler.go`), as the local
 * monitor's status poll (src/run/status-poll.ts). Aligned to the wall clock, so that the samples of
 * every runner fall in the same periods.
 */
export const VUS_PERIOD_MS = 500;

/**
 * The barrier container's `k6` arguments before its script: no progress, no summary, its lines
 * (console.log) alone and unadorned on stdout, the container's log the backend follows, and its
 * REST API (its start-time mailbox) on `address`.
 * @param address `host:port` of its REST API; in the Pod `0.0.0.0:`{@link BARRIER_PORT}, where the pod proxy reaches it.
 */
export function barrierRunArgs(address = `0.0.0.0:${BARRIER_PORT}`): string[] {
  return [
    'run',
    '--quiet',
    '--summary-mode=disabled',
    '--no-usage-report',
    '--log-output=stdout',
    '--log-format=raw',
    '--address',
    address,
  ];
}

/**
 * The barrier container's k6 script: polls the runner's `GET /v1/status` on 127.0.0.1 every
 * 100 ms until it is ready (status 4), then at the start of each {@link VUS_PERIOD_MS} period of
 * the wall clock (two polls a second, as the local monitor's status poll: the end of the test is
 * seen within a period, and every runner samples its VUs at the start of the same periods). From
 * ready to the start it also reads its own mailbox ({@link BARRIER_PORT}) every
 * {@link MAILBOX_POLL_MS}: once a start time is there, it sleeps until that instant of the node's
 * clock and un-pauses the runner itself (`PATCH /v1/status` `paused: false` on loopback), so that
 * every runner starts at the same instant however long the orchestrator's requests take to go
 * through the API server. A runner started otherwise (the orchestrator's fallback through the pod
 * proxy) is seen at the next status poll. From the `endsFrom` instant in the mailbox (shortly
 * before the test can first end) it polls every {@link END_POLL_MS}, so its end is seen soon. It
 * prints {@link BARRIER_LINE} lines: ready, this node's clock while it waits, started, the VU count
 * while the test runs, and the end, when it exits 0. When the runner's REST API answered once and
 * then stays gone for 2 s (the runner exited), it fails (exit 108) instead. The loopback polls cost
 * the API server nothing; the orchestrator follows this container's log, one request per runner for
 * the whole run.
 * @param port the runner's REST API port on 127.0.0.1 (a test runs it beside a local k6).
 * @param mailboxPort the barrier's own REST API port on 127.0.0.1 ({@link barrierRunArgs}).
 */
export function barrierScript(port: number = REST_PORT, mailboxPort: number = BARRIER_PORT): string {
  return `import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = {
  scenarios: { barrier: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '8760h' } },
};
const STATUS = 'http://127.0.0.1:${port}/v1/status';
const MAILBOX = 'http://127.0.0.1:${mailboxPort}/v1/setup';
// What the orchestrator put in this k6's setup data: the start instant (epoch ms), and when the
// test can first end (then its end is looked for every ${END_POLL_MS} ms); undefined before.
function mailbox() {
  const r = http.get(MAILBOX, { timeout: '2s' });
  const m = r.status === 200 ? r.json('data.attributes.data') : undefined;
  return m && typeof m.startAt === 'number' ? m : undefined;
}
// The start of the next period of the wall clock, a few ms in (so that a sample lands in it).
function nextPeriod(now) {
  return (Math.floor(now / ${VUS_PERIOD_MS}) + 1) * ${VUS_PERIOD_MS} + 5;
}
export default function () {
  let seen = false;
  let goneSince = 0;
  let ready = false;
  let started = false;
  let endsFrom = Infinity;
  let clocks = 0;
  let statusDue = 0;
  let period = -1;
  let vus = -1;
  for (;;) {
    if (ready && !started) {
      const m = mailbox();
      if (m !== undefined) {
        if (typeof m.endsFrom === 'number') endsFrom = m.endsFrom;
        const wait = m.startAt - Date.now();
        if (wait > 0) sleep(wait / 1000);
        const sent = Date.now();
        const body = JSON.stringify({ data: { type: 'status', id: 'default', attributes: { paused: false } } });
        const r = http.patch(STATUS, body, { headers: { 'Content-Type': 'application/json' }, timeout: '2s' });
        const line = '${BARRIER_LINE.started} ' + sent + ' ' + Date.now();
        started = true;
        // Quiet while the test begins (on a shared node every runner begins at once): the line and
        // the next poll wait for the next period.
        sleep(Math.max(0, nextPeriod(Date.now()) - Date.now()) / 1000);
        // Refused (started already, or k6 failing): the orchestrator starts it through the pod proxy.
        if (r.status === 200) console.log(line);
        continue;
      }
      if (Date.now() < statusDue) {
        sleep(${MAILBOX_POLL_MS / 1000});
        continue;
      }
    }
    const r = http.get(STATUS, { timeout: '2s' });
    const now = Date.now();
    if (r.status === 200) {
      seen = true;
      goneSince = 0;
      const status = r.json('data.attributes.status');
      if (status >= 4 && !ready) {
        ready = true;
        console.log('${BARRIER_LINE.ready} ' + now);
      } else if (ready && !started && status === 4 && clocks < ${CLOCK_LINES}) {
        // This node's clock, for the orchestrator to read its own against (the least delay counts).
        clocks++;
        console.log('${BARRIER_LINE.clock} ' + now);
      }
      if (status >= 5) started = true;
      if (status >= 9) {
        console.log('${BARRIER_LINE.end} ' + now + ' ' + status);
        return;
      }
      if (status >= 5 && Math.floor(now / ${VUS_PERIOD_MS}) !== period) {
        period = Math.floor(now / ${VUS_PERIOD_MS});
        const active = r.json('data.attributes.vus');
        if (active !== vus) {
          vus = active;
          console.log('${BARRIER_LINE.vus} ' + now + ' ' + vus);
        }
      }
    } else if (seen) {
      goneSince = goneSince || now;
      if (now - goneSince > 2000) exec.test.abort('the runner REST API went away');
    }
    statusDue = nextPeriod(Date.now());
    // Ready and not started: read the mailbox meanwhile; started: poll at the start of each period,
    // and more often once the test can end.
    if (!ready) sleep(0.1);
    else if (started) {
      const due = Date.now() >= endsFrom ? Math.min(statusDue, Date.now() + ${END_POLL_MS}) : statusDue;
      sleep(Math.max(0, due - Date.now()) / 1000);
    }
  }
}
`;
}

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

/** Pod spec options users set for their cluster's rules (the k6-operator's `runner` block has each). */
export interface PodOptions {
  /** Pod `spec.imagePullSecrets`: names of `kubernetes.io/dockerconfigjson` Secrets in the namespace. */
  imagePullSecrets?: string[];
  /**
   * Pod `spec.serviceAccountName` (e.g. one bound to a cloud identity). Its token is still not
   * mounted (`automountServiceAccountToken: false`): k6 does not talk to the Kubernetes API.
   */
  serviceAccountName?: string;
  /** Pod annotations, e.g. `sidecar.istio.io/inject: "false"` to keep a service mesh out. */
  podAnnotations?: Record<string, string>;
  /** Pod `spec.priorityClassName`. */
  priorityClassName?: string;
  /** Resources of the barrier container (default {@link BARRIER_RESOURCES}). */
  barrierResources?: Resources;
}

/** Everything the manifests need. */
export interface RunSpec extends PodOptions {
  runId: string;
  namespace: string;
  image: string;
  plan: RunPlan;
  placement: Placement;
  /** Resources of the k6 container. */
  resources?: Resources;
  env?: RunnerEnv[];
  /** Extra labels for every object (ConfigMap, Pods). */
  labels?: Record<string, string>;
  /**
   * Pod sysctls (`spec.securityContext.sysctls`), e.g. `net.ipv4.ip_local_port_range=1024 65535`
   * for large runs; Kubernetes allows the safe ones everywhere, others only where the kubelet does
   * (https://kubernetes.io/docs/tasks/administer-cluster/sysctl-cluster/).
   */
  sysctls?: Array<{ name: string; value: string }>;
  /** Safety net: the kubelet ends a runner Pod this many seconds after it started (`activeDeadlineSeconds`). */
  activeDeadlineSeconds: number;
}

/**
 * Splits a runner's Pod log into its summary and the rest (k6's own lines). Two summaries may be
 * there, both written to stdout as indented JSON (`{` and `}` alone on their lines, every line in
 * between indented): the compact one of the entry module's handleSummary (`format`
 * {@link COMPACT_SUMMARY_FORMAT}), which is preferred, and k6's `--summary-export`, the fallback.
 * A Pod log merges stdout and stderr line by line in arrival order, so a log line of k6's (never
 * indented) may land inside a block and is set aside. Of each kind the last block that parses as a
 * summary (it has `metrics`) counts; the lines of both are left out of the rest.
 * @returns `summary` with its `format` (`compact` or `export`) when the log holds a whole one.
 */
export function extractSummary(log: string): {
  summary?: string;
  format?: 'compact' | 'export';
  rest: string;
} {
  const lines = log.split('\n');
  const used = new Set<number>();
  let compact: string | undefined;
  let exported: string | undefined;
  for (
    let start = lines.lastIndexOf('{');
    start >= 0 && compact === undefined;
    start = start > 0 ? lines.lastIndexOf('{', start - 1) : -1
  ) {
    if (used.has(start)) continue;
    const body = ['{'];
    const block = [start];
    for (let i = start + 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === '}' || line === '}\r') {
        body.push('}');
        block.push(i);
        try {
          const parsed = JSON.parse(body.join('\n')) as { metrics?: unknown; format?: unknown };
          if (parsed && typeof parsed === 'object' && parsed.metrics) {
            for (const j of block) used.add(j);
            if (parsed.format === COMPACT_SUMMARY_FORMAT) compact = body.join('\n');
            else exported ??= body.join('\n');
          }
        } catch {
          // not a summary: look further up
        }
        break;
      }
      if (/^\s/.test(line)) {
        body.push(line);
        block.push(i);
      }
    }
  }
  const summary = compact ?? exported;
  if (summary === undefined) return { rest: log };
  return {
    summary,
    format: compact === undefined ? 'export' : 'compact',
    rest: lines.filter((_, j) => !used.has(j)).join('\n'),
  };
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

/** The name of the run's ConfigMap (and the prefix of its Pods). */
export function runName(runId: string): string {
  return `k6d-${runId}`;
}

/** The ConfigMap holding the archive (`binaryData`, base64 as the API wants it) and the barrier script. */
export function archiveConfigMap(spec: RunSpec, archive: Buffer): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: runName(spec.runId), namespace: spec.namespace, labels: runLabels(spec) },
    // The runners' k6 options from plan.ts (runnerEnv: the quantile grid, about 9 KB), here once
    // rather than in every runner Pod (see runnerPod).
    data: { 'barrier.js': barrierScript(), ...runnerEnv(spec.plan) },
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
 * @param owner the run's ConfigMap as created (its `uid` makes it the Pod's owner).
 */
export function runnerPod(spec: RunSpec, runner: RunnerPlan, owner: { name: string; uid: string }): V1Pod {
  const labels = { ...runLabels(spec), [LABELS.runner]: String(runner.index) };
  // No `--summary-export`: the runner's summary is the compact one its entry module's handleSummary
  // prints to stdout, into the Pod log ({@link extractSummary}), and an export in the Pod's scratch
  // folder could not be read (both on stdout broke both: k6 writes them through two file handles
  // of one pipe, and a run lost runner 0's summary to the interleaving). Not writing it saves each
  // runner about 25 ms of CPU at its end (measured with the quantile grid's 972 trend stats).
  const args = runnerArgs(spec.plan, runner, { archive: PATHS.archive, address: `0.0.0.0:${REST_PORT}` });
  const securityContext = {
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    runAsNonRoot: true,
    capabilities: { drop: ['ALL'] },
  };
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
  ];
  return {
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
          name: CONTAINERS.k6,
          image: spec.image,
          command: ['k6', ...args],
          env,
          ports: [{ name: 'k6-api', containerPort: REST_PORT }],
          ...(spec.resources ? { resources: spec.resources } : {}),
          securityContext,
          volumeMounts: [
            { name: 'archive', mountPath: PATHS.archiveDir, readOnly: true },
            { name: 'work', mountPath: PATHS.workDir },
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
            { name: 'TMPDIR', value: PATHS.workDir },
          ],
          resources: spec.barrierResources ?? BARRIER_RESOURCES,
          securityContext,
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
  };
}
