/**
 * The names and ports every object of a run, and the code that finds them, agree on: labels,
 * container names, the runner Pod's ports and paths, the run's name. A leaf of the Kubernetes
 * backend: the manifests, the barrier script, the Pod watch and the cleanup import it.
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

/**
 * The port of the interval receiver (receiver/main.ts) inside the runner Pod, on 127.0.0.1 only:
 * the runner's k6 pushes its histograms there (`K6_PROMETHEUS_RW_SERVER_URL`).
 */
export const RECEIVER_PORT = 6567;

/** Where the archive and the scratch folder are mounted in a runner's container. */
export const PATHS = {
  archiveDir: '/k6d/archive',
  archive: '/k6d/archive/archive.tar',
  barrierScript: '/k6d/archive/barrier.js',
  receiverScript: '/k6d/archive/interval-receiver.cjs',
  workDir: '/k6d/work',
} as const;

/** The volumes of a runner Pod: the run's ConfigMap (archive, barrier script) and the scratch folder. */
export const VOLUMES = { archive: 'archive', work: 'work' } as const;

/** The container names of a runner Pod. */
export const CONTAINERS = { k6: 'k6', barrier: 'barrier', receiver: 'interval-receiver' } as const;

/** The name of the run's ConfigMap (and the prefix of its Pods, `<name>-<runner index>`). */
export function runName(runId: string): string {
  return `k6d-${runId}`;
}

/** The label selector of every object of run `runId`. */
export function runSelector(runId: string): string {
  return `${LABELS.runId}=${runId}`;
}

/**
 * The label selector of every object of every run in a namespace: managed by k6-distributed and
 * carrying a run id (objects of the user's own with the same labels but no run id are left alone).
 */
export function allRunsSelector(): string {
  return `${LABELS.managedBy}=k6-distributed,${LABELS.runId}`;
}
