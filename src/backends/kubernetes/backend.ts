import { readFile } from 'node:fs/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { runnerApi } from '../../k6/rest.ts';
import type { RunPlan } from '../../plan.ts';
import type { Backend, Runner, ScheduledStart, StartOptions } from '../backend.ts';
import {
  closePooledConnections,
  followPodLog,
  type LogFollower,
  makeClient,
  retrying,
} from './api-client.ts';
import { apiError, apiErrorMessage } from './api-errors.ts';
import { BarrierFollows } from './barrier/follow.ts';
import type { BarrierLog } from './barrier/log.ts';
import { cleanUpRun } from './cleanup.ts';
import { type BackendClock, realBackendClock } from './clock.ts';
import { checkArchiveSize, createRun } from './create.ts';
import { RunnerExits } from './exits.ts';
import { hasReceiver } from './manifests.ts';
import { BARRIER_PORT, runName } from './names.ts';
import type { KubernetesBackendOptions } from './options.ts';
import { checkPermissions } from './permissions.ts';
import { PodProxy } from './pod-proxy.ts';
import { RunnerPods, watchPods } from './pods.ts';
import { ReceiverLogs } from './receiver/collect.ts';
import { receiverPlan } from './receiver/plan.ts';
import { RunnerApis } from './runner-api.ts';
import { RunnerLogs } from './runner-log.ts';
import { scheduledStart, startLeadMs } from './scheduled-start.ts';

/**
 * The longest a runner's log follow may take to be taken before its Pod is deleted to end its
 * linger anyway, in ms: long enough for a follow refused at once (a 503) to be sent again.
 */
const FOLLOW_SETTLE_MS = 1_500;

/** How long a runner's kill waits for its Pod's end to be seen, in ms. */
const KILL_WAIT_MS = 30_000;

/** The parts of a launched run, each owning its own state. */
interface Parts {
  pods: RunnerPods;
  exits: RunnerExits;
  barriers: BarrierFollows;
  logs: RunnerLogs;
  apis: RunnerApis;
  /** The runners' interval receivers' logs; undefined when the run has no receiver. */
  receivers: ReceiverLogs | undefined;
}

/**
 * The Kubernetes backend: one Pod per runner on the user's cluster, the archive in a ConfigMap,
 * readiness and failures from a Pod watch, the k6 REST API through the API server's pod proxy
 * (`/api/v1/namespaces/NS/pods/NAME:6565/proxy/v1/status`, RBAC `pods/proxy`).
 *
 * Neither the barrier nor the monitor polls the runners through the API server: each runner's
 * barrier container prints when k6 is at status 4, its VU count while the test runs and the end of
 * its test (barrier/script.ts), and the backend follows that log, one request per runner for the
 * whole run (barrier/follow.ts); a runner's `api.status()` is answered from it (runner-api.ts).
 *
 * This class only wires the parts, each of which owns its state: the objects' creation
 * (create.ts), the Pod watch (pods.ts) and the runners' exits (exits.ts), the barrier logs
 * (barrier/), the runners' k6 logs (runner-log.ts), their REST APIs (runner-api.ts, pod-proxy.ts),
 * the scheduled start (scheduled-start.ts) and the cleanup (cleanup.ts).
 */
export class KubernetesBackend implements Backend {
  readonly name = 'kubernetes' as const;
  private readonly o: KubernetesBackendOptions;
  private readonly clock: BackendClock;
  private readonly core: CoreV1Api;
  private parts: Parts | undefined;
  private runnerCount = 0;
  private cleanedUp = false;
  /** Aborts the followed logs at cleanup (a node that is gone never ends them). */
  private readonly closing = new AbortController();
  private readonly proxy: PodProxy;

  /** @param clock the backend's time (default the real one); unit tests pass a fake one. */
  constructor(options: KubernetesBackendOptions, clock: BackendClock = realBackendClock) {
    this.o = options;
    this.clock = clock;
    this.core = makeClient(options.kc, CoreV1Api);
    this.proxy = new PodProxy(options.kc, options.namespace, (index) => this.parts!.pods.state(index));
  }

  /** Checks the credentials' permissions before anything is created. */
  async preflight(): Promise<void> {
    await checkPermissions(this.o.kc, this.o.namespace);
  }

  /**
   * Creates the run's ConfigMap and runner Pods and watches them. Each Pod's
   * `activeDeadlineSeconds` is `lifetimeS` (src/run/launch.ts `runLifetimeS`, from the Pod's start:
   * the kubelet then ends it, its k6 lingering or not), else the options' safety net.
   */
  async launch(plan: RunPlan, archivePath: string, lifetimeS?: number): Promise<Runner[]> {
    const { namespace, runId, log } = this.o;
    const archive = await readFile(archivePath);
    checkArchiveSize(archive);
    this.runnerCount = plan.runners.length;
    const activeDeadlineSeconds = lifetimeS ?? this.o.activeDeadlineSeconds;
    const spec = { ...this.o, activeDeadlineSeconds, ...(await receiverPlan(plan, this.o)) };
    const parts = this.makeParts(activeDeadlineSeconds, hasReceiver(spec));
    this.parts = parts;
    try {
      // The Pod watch's list beside the creates, not after them: the watch goes on from the list's
      // resourceVersion, so every Pod the list missed comes as an event.
      await Promise.all([createRun(this.core, spec, archive, log), parts.pods.start()]);
    } catch (error) {
      throw apiError(error, `creating the runners in namespace ${namespace}`);
    }
    log.info(
      `created ConfigMap ${runName(runId)} and ${plan.runners.length} runner Pods in namespace ${namespace}`,
    );
    return plan.runners.map((r) => this.runner(parts, r.index));
  }

  /**
   * The run's parts, wired to each other. @param deadlineS the runner Pods' `activeDeadlineSeconds`.
   * @param receiver whether the runner Pods have an interval receiver.
   */
  private makeParts(deadlineS: number, receiver: boolean): Parts {
    const { kc, namespace, runId, log } = this.o;
    const { clock, closing, proxy } = this;
    const signal = closing.signal;
    const pods = new RunnerPods({ api: this.core, watch: watchPods(kc), namespace, runId, log, clock });
    const state = (index: number) => pods.state(index);
    const follow: LogFollower = (pod, options) =>
      followPodLog(kc, { namespace, ...pod }, { ...options, signal, agent: proxy.agent });
    // The longest a follow that lasts the whole run may take: the runner Pod's
    // `activeDeadlineSeconds` and a minute for the container to end and its log to be read.
    const wholeRunMs = (deadlineS + 60) * 1000;
    const barriers = new BarrierFollows({ follow, state, log, clock, signal, timeoutMs: wholeRunMs });
    const logs = new RunnerLogs({ follow, api: this.core, namespace, pods, log, clock, signal, wholeRunMs });
    const exits = new RunnerExits(
      pods,
      {
        scheduleTimeoutS: this.o.scheduleTimeoutS,
        ...(this.o.resources?.limits?.memory ? { memoryLimit: this.o.resources.limits.memory } : {}),
      },
      clock,
      log,
    );
    const apis = new RunnerApis({
      state,
      barriers,
      proxy: (index) => proxy.request(index),
      runnerCount: () => this.runnerCount,
      clock,
      onStart: (index, startsInMs) => logs.followAfterStart(index, startsInMs),
    });
    const receivers = receiver
      ? new ReceiverLogs({
          follow,
          state,
          pod: (index) => pods.pods.get(index),
          clockAheadMs: () => this.clockAheadMs(),
        })
      : undefined;
    return { pods, exits, barriers, logs, apis, receivers };
  }

  private runner(parts: Parts, index: number): Runner {
    const { pods, exits, barriers, logs, apis, receivers } = parts;
    const { namespace, log } = this.o;
    const api = apis.api(index);
    let testEnded!: (status: number) => void;
    const ended = new Promise<number>((resolve) => {
      testEnded = resolve;
    });
    const exited = exits.watch(index, {
      onState: (state) => {
        if (state.kind === 'running' && state.barrier === 'running')
          barriers.follow(index, state.pod, testEnded);
        if ((state.kind === 'running' || state.kind === 'ended') && state.disruption)
          logs.save(index, state.pod);
      },
      // Its k6 may still run on the silent node: the pod proxy reaches the Pod's IP directly.
      onLost: () => void api.stop().catch(() => {}),
    });
    return {
      index,
      api,
      exited,
      testEnded: ended,
      vusRecord: () => barriers.get(index)?.log.vusRecord(),
      ready: () => barriers.gate(index) === 'ready',
      kill: async () => {
        const state = pods.state(index);
        if (state.kind !== 'none') {
          pods.deleting.add(state.pod);
          await retrying(() =>
            this.core.deleteNamespacedPod({ name: state.pod, namespace, gracePeriodSeconds: 0 }),
          ).catch((error: unknown) =>
            log.warning(`runner ${index}: deleting Pod ${state.pod} failed: ${apiErrorMessage(error)}`),
          );
        }
        await Promise.race([exited, new Promise<void>((r) => this.clock.timer(KILL_WAIT_MS, r))]);
      },
      terminate: async () => {
        // Deleting the Pod with its grace period sends k6 SIGTERM, which ends its --linger; k6 then
        // writes its compact summary to the log, which is followed to the end (from shortly after
        // the start, else from now: the Pod object goes once the container ended). Marked as ours,
        // so it is not a disruption.
        const state = pods.state(index);
        if (state.kind !== 'running') return;
        const followed = logs.save(index, state.pod);
        pods.deleting.add(state.pod);
        pods.terminated.add(state.pod);
        // The log is followed before the Pod is deleted, so that what k6 writes on SIGTERM (its
        // summary) is read: the Pod is deleted once the follow is taken (at once for a follow taken
        // during the test; a follow refused at once, a 503, is sent again first), or after
        // FOLLOW_SETTLE_MS whatever happened to it.
        // The interval receiver prints what it kept when the kubelet ends it, after k6: its log is
        // followed now too.
        const receiver = receivers?.follow(index, state.pod) ?? Promise.resolve();
        await Promise.race([
          Promise.all([followed.inPlace.catch(() => {}), receiver]),
          this.clock.sleep(FOLLOW_SETTLE_MS),
        ]);
        await this.core.deleteNamespacedPod({ name: state.pod, namespace }).catch(() => {});
      },
      collect: () => logs.collect(index, exits.get(index), exits.isLost(index)),
      ...(receivers ? { intervalDeltas: () => receivers.read(index) } : {}),
    };
  }

  /**
   * The scheduled start (scheduled-start.ts): every runner's barrier container starts its runner at
   * one instant of its node's clock.
   * @returns undefined when some runner's barrier log is not followed (or not ready): its start could
   *   not be confirmed, so every runner is un-paused through the pod proxy instead.
   * @throws Error naming a runner that could not be started at all.
   */
  async startAll(runners: readonly Runner[], options: StartOptions): Promise<ScheduledStart | undefined> {
    const parts = this.parts;
    if (!parts) return undefined;
    const { pods, exits, barriers, apis } = parts;
    const logs: BarrierLog[] = [];
    for (const runner of runners) {
      const follow = barriers.get(runner.index);
      if (!follow || follow.failed || follow.log.aheadMs === undefined) return undefined;
      logs.push(follow.log);
    }
    const deps = {
      clock: this.clock,
      log: this.o.log,
      slowestConfirmMs: apis.slowestConfirmMs,
      nodeOf: (index: number) => pods.pods.get(index)?.spec?.nodeName,
      setMailbox: (index: number, mailbox: unknown) =>
        this.proxy.request(index, BARRIER_PORT)('PUT', '/v1/setup', mailbox),
      proxied: (index: number) => runnerApi(this.proxy.request(index)),
      markStarted: (index: number, startsInMs: number) => apis.markStarted(index, startsInMs),
      exited: (index: number) => exits.has(index),
      onBarrierChange: (listener: () => void) => barriers.onChange(listener),
    };
    return scheduledStart(deps, runners, logs, options);
  }

  /**
   * The lead its scheduled start would take now, in ms (scheduled-start.ts `startLeadMs`), for one
   * start instant over several backends (load zones).
   */
  startLeadMs(): number {
    return startLeadMs(this.parts?.apis.slowestConfirmMs ?? 0);
  }

  /**
   * How far this machine's clock is at most ahead of the runners' nodes' clock, in ms: the least
   * over the runners' barrier logs (scheduled-start.ts takes the same); undefined before every
   * runner's barrier log gave one.
   */
  clockAheadMs(): number | undefined {
    const parts = this.parts;
    if (!parts) return undefined;
    const ahead: number[] = [];
    for (let index = 0; index < this.runnerCount; index++) {
      const value = parts.barriers.get(index)?.log.aheadMs;
      if (value === undefined) return undefined;
      ahead.push(value);
    }
    return ahead.length > 0 ? Math.min(...ahead) : undefined;
  }

  async cleanup(): Promise<void> {
    if (this.cleanedUp) return;
    const parts = this.parts;
    if (!parts) return closePooledConnections(this.o.kc);
    this.cleanedUp = true;
    const { pods, exits } = parts;
    await cleanUpRun({
      api: this.core,
      clock: this.clock,
      namespace: this.o.namespace,
      runId: this.o.runId,
      policy: this.o.cleanup,
      log: this.o.log,
      pods: pods.pods,
      exited: (index) => exits.has(index),
      allCompleted: exits.allCompleted(this.runnerCount),
      stop: () => {
        pods.stop();
        this.closing.abort();
        this.proxy.close();
      },
      closeConnections: () => closePooledConnections(this.o.kc),
    });
  }
}
