import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node';
import type { Clock } from '../../clock.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { retrying } from './api-client.ts';
import { isTimeout } from './api-errors.ts';
import { CONTAINERS, LABELS, runSelector } from './names.ts';

/**
 * Runner Pods as the orchestrator sees them, from a watch that reconnects: the client's watches
 * end after about 30 s, so each one is resumed from the last resourceVersion seen, and a 410 Gone
 * (history compacted) starts over with a list.
 */

/** Where a runner's Pod is. */
export type PodState =
  | { kind: 'none' }
  | { kind: 'pending'; pod: string; unschedulable?: string }
  /**
   * `barrier`, its barrier container (barrier/script.ts): `starting` until it runs, `running`, `exited`
   * once it ended with exit 0 (it saw its runner's test end), `failed` when it ended otherwise.
   */
  | {
      kind: 'running';
      pod: string;
      node?: string;
      barrier: 'starting' | 'running' | 'exited' | 'failed';
      disruption?: Disruption;
    }
  | {
      kind: 'ended';
      pod: string;
      code: number | null;
      reason?: string;
      node?: string;
      disruption?: Disruption;
    }
  /** It will never run: image pull error, bad config, crash loop, deleted. */
  | { kind: 'failed'; pod: string; reason: string };

/**
 * Why Kubernetes took a Pod away, from its `DisruptionTarget` condition (its reasons are the
 * `PodReason*` constants of k8s.io/api core/v1, set by the eviction API, the scheduler's
 * preemption, the taint manager, the Pod GC and the kubelet) or the kubelet's `Evicted` status
 * reason; undefined when nothing disrupted it.
 */
export function disruptionOf(pod: V1Pod): Disruption | undefined {
  const target = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
  const message = target?.message ?? pod.status?.message;
  const what = (() => {
    switch (target?.reason) {
      case 'PreemptionByScheduler':
        return 'preempted';
      case 'EvictionByEvictionAPI':
      case 'DeletionByTaintManager':
      case 'TerminationByKubelet':
        return 'evicted';
      case 'DeletionByPodGC':
        return 'deleted by the Pod garbage collector';
      default:
        if (pod.status?.reason === 'Evicted') return 'evicted';
        return target ? `disrupted (${target.reason ?? 'DisruptionTarget'})` : undefined;
    }
  })();
  if (!what) return undefined;
  return { what, ...(target?.reason ? { by: target.reason } : {}), ...(message ? { message } : {}) };
}

/** What took a runner's Pod away. */
export interface Disruption {
  /** `evicted`, `preempted`, `deleted`, … as in "runner 2 was evicted on node n1". */
  what: string;
  /** The `DisruptionTarget` reason, e.g. `EvictionByEvictionAPI`, `PreemptionByScheduler`. */
  by?: string;
  /** Kubernetes' message (e.g. the kubelet's "The node was low on resource: memory."). */
  message?: string;
}

/** Waiting reasons that never resolve by themselves (kubelet container states). */
const FATAL_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'CrashLoopBackOff',
]);

/**
 * Why an init container (the `pod-patch` input's) keeps the runner from ever starting: it exited
 * non-zero (with `restartPolicy: Never` the Pod then fails) or waits for good ({@link FATAL_WAITING});
 * undefined otherwise. (https://kubernetes.io/docs/concepts/workloads/pods/init-containers/)
 */
function initFailure(pod: V1Pod): string | undefined {
  for (const c of pod.status?.initContainerStatuses ?? []) {
    const ended = c.state?.terminated;
    if (ended && ended.exitCode !== 0) {
      const why = ended.reason && ended.reason !== 'Error' ? ` (${ended.reason})` : '';
      return `init container ${c.name} exited with code ${ended.exitCode}${why}`;
    }
    const waiting = c.state?.waiting;
    if (waiting?.reason && FATAL_WAITING.has(waiting.reason))
      return `init container ${c.name}: ${waiting.reason}: ${waiting.message ?? ''}`.trim();
  }
  return undefined;
}

/**
 * Classifies a runner Pod from its status (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/).
 * A terminated container gives its exit code; `OOMKilled` and other kubelet reasons are kept; an
 * init container that failed makes it `failed`.
 */
export function classifyPod(pod: V1Pod): PodState {
  const name = pod.metadata?.name ?? '?';
  const node = pod.spec?.nodeName;
  const status = pod.status;
  const container =
    status?.containerStatuses?.find((c) => c.name === CONTAINERS.k6) ?? status?.containerStatuses?.[0];
  const barrier = status?.containerStatuses?.find((c) => c.name === CONTAINERS.barrier);
  const disruption = disruptionOf(pod);
  const disrupted = disruption ? { disruption } : {};
  const terminated = container?.state?.terminated;
  if (terminated) {
    const reason =
      terminated.reason && terminated.reason !== 'Completed' && terminated.reason !== 'Error'
        ? terminated.reason
        : undefined;
    return {
      kind: 'ended',
      pod: name,
      code: terminated.exitCode ?? null,
      ...(reason ? { reason } : {}),
      ...(node ? { node } : {}),
      ...disrupted,
    };
  }
  const init = initFailure(pod);
  if (init) return { kind: 'failed', pod: name, reason: init };
  if (status?.phase === 'Failed' || status?.phase === 'Succeeded') {
    return {
      kind: 'ended',
      pod: name,
      code: null,
      reason: `${status.reason ?? status.phase}: ${status.message ?? 'no container status'}`,
      ...(node ? { node } : {}),
      ...disrupted,
    };
  }
  const waiting = container?.state?.waiting;
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason)) {
    return { kind: 'failed', pod: name, reason: `${waiting.reason}: ${waiting.message ?? ''}`.trim() };
  }
  if (container?.state?.running) {
    const ended = barrier?.state?.terminated;
    const gate = ended
      ? ended.exitCode === 0
        ? 'exited'
        : 'failed'
      : barrier?.state?.running
        ? 'running'
        : 'starting';
    return { kind: 'running', pod: name, barrier: gate, ...(node ? { node } : {}), ...disrupted };
  }
  const scheduled = status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return { kind: 'pending', pod: name, unschedulable: scheduled.message ?? 'Unschedulable' };
  }
  return { kind: 'pending', pod: name };
}

/**
 * Opens one watch (client-node's `Watch.watch`: `path`, its query, a callback per event with its
 * type (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`) and object, and one when it ends,
 * with the error that ended it, if any). Resolves with what aborts it.
 */
export type WatchPods = (
  path: string,
  query: Record<string, string | boolean>,
  onEvent: (phase: string, obj: V1Pod & { code?: number }) => void,
  onDone: (error: unknown) => void,
) => Promise<{ abort(): void }>;

/** {@link WatchPods} through `kc`'s API server. */
export function watchPods(kc: KubeConfig): WatchPods {
  return (path, query, onEvent, onDone) => new Watch(kc).watch(path, query, onEvent, onDone);
}

/** What {@link RunnerPods} needs: the API calls, the watch, the run, the log and the clock. */
export interface RunnerPodsOptions {
  api: Pick<CoreV1Api, 'listNamespacedPod'>;
  watch: WatchPods;
  namespace: string;
  runId: string;
  log: Pick<Logger, 'warning'>;
  /** Waits between watches that fail. */
  clock: Pick<Clock, 'sleep'>;
}

/** Watches the Pods of one run and keeps the newest state of each runner. */
export class RunnerPods {
  /** Newest Pod per runner index. */
  readonly pods = new Map<number, V1Pod>();
  /** Names of the runners' Pods that were deleted. */
  readonly deleted = new Set<string>();
  /** Names of the Pods this process deletes itself (not a disruption). */
  readonly deleting = new Set<string>();
  /**
   * Pods this process asked to end gracefully (the end of a runner's `--linger`, Runner.terminate):
   * one that is gone before its end was seen (the watch was down meanwhile) ended as asked.
   */
  readonly terminated = new Set<string>();
  private abort: { abort(): void } | undefined;
  private stopped = false;
  private resourceVersion = '';
  private readonly listeners = new Set<() => void>();
  private readonly o: RunnerPodsOptions;

  constructor(options: RunnerPodsOptions) {
    this.o = options;
  }

  /** The label selector of the run's runner Pods. */
  get selector(): string {
    return runSelector(this.o.runId);
  }

  /** Calls `listener` after every change. @returns a function that removes it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private update(pod: V1Pod, deleted = false): void {
    const index = Number(pod.metadata?.labels?.[LABELS.runner]);
    if (!Number.isInteger(index)) return;
    if (deleted && pod.metadata?.name) this.deleted.add(pod.metadata.name);
    this.pods.set(index, pod);
    for (const l of this.listeners) l();
  }

  /**
   * The state of runner `index`. A Pod deleted by someone else than this process counts as
   * disrupted (`its Pod was deleted`), as an evicted or preempted one does.
   */
  state(index: number): PodState {
    const pod = this.pods.get(index);
    if (!pod) return { kind: 'none' };
    const name = pod.metadata?.name ?? '';
    let state = classifyPod(pod);
    const byOthers = !this.deleting.has(name) && (this.deleted.has(name) || pod.metadata?.deletionTimestamp);
    if (byOthers && (state.kind === 'running' || state.kind === 'ended') && !state.disruption) {
      state = { ...state, disruption: { what: 'deleted' } };
    }
    if (this.deleted.has(name) && state.kind === 'running' && this.terminated.has(name)) {
      // Its exit code was never seen: k6 exits with its test's own code, which the orchestrator
      // already read from the runner's status; 0 stands for it.
      return { kind: 'ended', pod: name, code: 0, ...(state.node ? { node: state.node } : {}) };
    }
    if (this.deleted.has(name) && state.kind !== 'ended') {
      const what = state.kind === 'running' && state.disruption ? state.disruption.what : 'deleted';
      return { kind: 'failed', pod: state.kind === 'none' ? '?' : state.pod, reason: `its Pod was ${what}` };
    }
    return state;
  }

  /** Lists, then watches until {@link stop}, reconnecting as long as it runs. */
  async start(): Promise<void> {
    await this.list();
    void this.watchLoop();
  }

  /** Lists the run's Pods (retried while the API server fails transiently). */
  private async list(): Promise<void> {
    const list = await retrying(() =>
      this.o.api.listNamespacedPod({ namespace: this.o.namespace, labelSelector: this.selector }),
    );
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    // A Pod known before and missing now was deleted while no watch saw it.
    const listed = new Set(list.items.map((p) => p.metadata?.name));
    for (const pod of [...this.pods.values()])
      if (pod.metadata?.name && !listed.has(pod.metadata.name)) this.update(pod, true);
    for (const pod of list.items) this.update(pod);
  }

  private async watchLoop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        const gone = await this.watchOnce();
        failures = 0;
        if (gone) await this.list();
      } catch (error) {
        failures++;
        if (failures === 3) this.o.log.warning(`watching runner Pods keeps failing: ${errorMessage(error)}`);
        await this.o.clock.sleep(Math.min(1000 * failures, 5000));
        if (!this.stopped) await this.list().catch(() => {});
      }
    }
  }

  /**
   * One watch; resolves when it ends, with `true` when the resourceVersion is too old (410). A watch
   * that opened and then ended with a `TimeoutError` is a quiet one, not a failure: client-node's
   * `Watch` aborts a watch that received nothing for 30 s (its `requestTimeoutMs`), and no runner
   * Pod changes for minutes while an unschedulable runner waits or VUs initialise (the API
   * server's bookmarks come about once a minute). It is resumed from the same resourceVersion.
   * A timeout before the watch opened (the API server did not answer) stays a failure.
   */
  private watchOnce(): Promise<boolean> {
    return new Promise((resolve, reject) => {
      let gone = false;
      let opened = false;
      this.o
        .watch(
          `/api/v1/namespaces/${this.o.namespace}/pods`,
          { labelSelector: this.selector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true },
          (phase, obj: V1Pod & { code?: number }) => {
            if (phase === 'ERROR') {
              if (obj.code === 410) gone = true;
              return;
            }
            if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
            if (phase === 'BOOKMARK') return;
            this.update(obj, phase === 'DELETED');
          },
          (error: unknown) =>
            error && !this.stopped && !(opened && isTimeout(error)) ? reject(error) : resolve(gone),
        )
        .then((controller) => {
          opened = true;
          this.abort = controller;
          if (this.stopped) controller.abort();
        }, reject);
    });
  }

  /** Ends the watch; nothing keeps the process alive afterwards. */
  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    this.listeners.clear();
  }
}
