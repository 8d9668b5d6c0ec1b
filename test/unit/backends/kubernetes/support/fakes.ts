import type { V1Pod } from '@kubernetes/client-node';
import type { BackendClock } from '../../../../../src/backends/kubernetes/clock.ts';
import { RunnerPods, type WatchPods } from '../../../../../src/backends/kubernetes/pods.ts';
import { planRun } from '../../../../../src/run/plan.ts';

/*
 * Fakes for unit tests of the Kubernetes backend's parts: a clock whose time moves only when the
 * test says so, and a run's Pods fed through the real Pod watch (pods.ts) from a fake API, so the
 * parts see the states a real API server's objects give.
 */

/** Epoch ms at which a {@link FakeBackendClock} starts. */
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * A {@link BackendClock} whose time moves only by {@link advance} (or {@link runUntil}): due timers
 * and sleeps fire in order of their wake times (ties in call order), each at its own time.
 */
export class FakeBackendClock implements BackendClock {
  private t = T0;
  private seq = 0;
  private timers: Array<{ wake: number; seq: number; fn: () => void }> = [];

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timer(ms, resolve));
  }

  timer(ms: number, fn: () => void): () => void {
    const entry = { wake: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(entry);
    return () => {
      this.timers = this.timers.filter((e) => e !== entry);
    };
  }

  /** How many timers are pending. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves the time `ms` on, firing each timer due on the way at its wake time, then settles promises. */
  async advance(ms: number): Promise<void> {
    const until = this.t + ms;
    for (;;) {
      await settle();
      this.timers.sort((a, b) => a.wake - b.wake || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.wake > until) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.wake);
      next.fn();
    }
    this.t = until;
    await settle();
  }

  /** Fires the timers one by one, in order, until `promise` settles; fails after `limitMs` of fake time. */
  async runUntil<T>(promise: Promise<T>, limitMs = 3_600_000): Promise<T> {
    let done = false;
    const watched = promise.finally(() => {
      done = true;
    });
    const until = this.t + limitMs;
    while (!done) {
      await settle();
      if (done) break;
      this.timers.sort((a, b) => a.wake - b.wake || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next || next.wake > until) throw new Error('runUntil: nothing left to fire, or past the limit');
      this.t = Math.max(this.t, next.wake);
      next.fn();
    }
    return watched;
  }
}

/** Lets pending promise callbacks run (a macrotask). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A runner Pod of run `r1` (`k6d-r1-<index>`) with the given status and extra metadata/spec. */
export function runnerPodObject(
  index: number,
  status: V1Pod['status'],
  extra: { metadata?: V1Pod['metadata']; spec?: Partial<NonNullable<V1Pod['spec']>> } = {},
): V1Pod {
  return {
    metadata: {
      name: `k6d-r1-${index}`,
      uid: `uid-${index}`,
      labels: { 'k6-distributed.io/run-id': 'r1', 'k6-distributed.io/runner': String(index) },
      ...extra.metadata,
    },
    spec: { nodeName: 'n1', containers: [], ...extra.spec },
    status,
  };
}

/** The status of a runner Pod whose k6 and barrier containers run. */
export const RUNNING_STATUS: V1Pod['status'] = {
  phase: 'Running',
  containerStatuses: [
    { name: 'k6', image: 'k6', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
    { name: 'barrier', image: 'k6', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
  ],
};

/** The status of a runner Pod whose k6 container ended (`terminated`) while its barrier ran. */
export function endedStatus(terminated: { exitCode: number; reason?: string }): V1Pod['status'] {
  return {
    phase: terminated.exitCode === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [
      { name: 'k6', image: 'k6', imageID: '', ready: false, restartCount: 0, state: { terminated } },
      { name: 'barrier', image: 'k6', imageID: '', ready: false, restartCount: 0, state: { running: {} } },
    ],
  };
}

/**
 * The Pods of run `r1` as the real Pod watch (pods.ts `RunnerPods`) sees them, from a fake API: the
 * list gives `initial`, and {@link emit} sends a watch event.
 */
export class FakeRunPods {
  readonly pods: RunnerPods;
  private onEvent: Parameters<WatchPods>[2] | undefined;

  constructor(clock: BackendClock, initial: V1Pod[] = []) {
    const watch: WatchPods = async (_path, _query, onEvent) => {
      this.onEvent = onEvent;
      return { abort: () => {} };
    };
    this.pods = new RunnerPods({
      api: {
        listNamespacedPod: async () => ({ metadata: { resourceVersion: '1' }, items: initial }),
      } as never,
      watch,
      namespace: 'load',
      runId: 'r1',
      log: { warning: () => {} },
      clock,
    });
  }

  /** Lists and starts watching. */
  async start(): Promise<this> {
    await this.pods.start();
    await settle();
    return this;
  }

  /** Sends a watch event (`MODIFIED` by default) for `pod`. */
  emit(pod: V1Pod, phase = 'MODIFIED'): void {
    if (!this.onEvent) throw new Error('the watch is not open');
    this.onEvent(phase, pod);
  }
}

/** The objects of a small run (no placement rules) with `runners` runners: what the manifests take. */
export function smallRunSpec(runId: string, runners: number) {
  return {
    runId,
    namespace: 'load',
    image: 'grafana/k6:2.2.0',
    plan: planRun({ runners, maxVUs: runners * 10 }),
    placement: { spread: 'none' as const },
    activeDeadlineSeconds: 600,
  };
}
