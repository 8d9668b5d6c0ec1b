import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import { runnerCompleted } from '../../k6/exit-codes.ts';
import {
  K6_STATUS,
  type K6Status,
  parseBody,
  REST_TIMEOUT_MS,
  type RunnerApi,
  RunnerHttpError,
  type RunnerRequest,
  runnerApi,
} from '../../k6/rest.ts';
import type { Logger } from '../../log.ts';
import type { RunnerExit, RunPlan } from '../../plan.ts';
import type { Backend, Runner, ScheduledStart, StartOptions } from '../backend.ts';
import {
  closePooledConnections,
  DEFAULT_RETRY,
  type FollowedLog,
  followPodLog,
  makeClient,
  retrying,
} from './api-client.ts';
import { apiError, apiErrorMessage, apiStatus } from './api-errors.ts';
import { BarrierLog, nodeClocksApart } from './barrier-log.ts';
import {
  archiveConfigMap,
  BARRIER_PORT,
  CONTAINERS,
  END_POLL_MS,
  extractSummary,
  LABELS,
  MAILBOX_POLL_MS,
  MAX_ARCHIVE_BYTES,
  type Placement,
  type PodOptions,
  REST_PORT,
  type Resources,
  type RunnerEnv,
  runName,
  runnerPod,
} from './manifests.ts';
import { checkPermissions } from './permissions.ts';
import { type PodState, RunnerPods } from './pods.ts';

/** When the backend removes what it created. */
export type CleanupPolicy = 'always' | 'on-success' | 'never';

/** Options of {@link KubernetesBackend}. */
export interface KubernetesBackendOptions extends PodOptions {
  kc: KubeConfig;
  namespace: string;
  /** A short unique id (lowercase letters and digits): names and labels carry it. */
  runId: string;
  /**
   * Runner container image, e.g. `grafana/k6:2.2.0`, or an xk6 build: it needs `k6` on its PATH
   * and nothing else (no shell).
   */
  image: string;
  placement: Placement;
  /** Resources of the k6 container (the barrier container's are `barrierResources`). */
  resources?: Resources;
  env?: RunnerEnv[];
  labels?: Record<string, string>;
  /** Pod sysctls of every runner. */
  sysctls?: Array<{ name: string; value: string }>;
  /**
   * `always`: delete everything at the end; `on-success`: keep the Pods and ConfigMap for
   * inspection when a runner failed; `never`: keep them. Runners still running are stopped in
   * every case.
   */
  cleanup: CleanupPolicy;
  /** How long a runner Pod may stay Unschedulable before the run fails, in s. */
  scheduleTimeoutS: number;
  /** Safety net on each runner Pod (`activeDeadlineSeconds`), in s. */
  activeDeadlineSeconds: number;
  log: Logger;
}

/**
 * How long after its start a runner's k6 log is followed, in ms: late enough not to load the API
 * server while the start requests are answered (the start skew counts).
 */
const FOLLOW_AFTER_START_MS = 1_000;

/** A runner's followed k6 log: `text` falls back to a plain read when the follow fails. */
interface SavedLog extends FollowedLog {
  /** Resolves when the follow itself ends (the container ended) or breaks; never rejects. */
  followed: Promise<void>;
  /** What the follow has read so far. */
  sofar(): string;
}

/** How long a followed log of a disrupted runner may take: its Pod's grace period (30 s) and a margin, in ms. */
const FOLLOW_TIMEOUT_MS = 60_000;
/**
 * How long after a taken-away Pod's grace period its node may stay silent before the runner is
 * taken for lost, in ms.
 */
const LOST_AFTER_MS = 10_000;
/** Starts and stops through the pod proxy: a few quick retries (the start skew counts). */
const PATCH_RETRY = { retries: 3, maxRetryTimeMs: 10_000 };

/**
 * The lead of a scheduled start, in ms: from sending the start time to every runner's barrier
 * container to the instant they start, it covers those requests' way through the API server
 * ({@link START_LEAD_RTT_SHARE} of the slowest of the confirmations just before, which went out all
 * at once the same way), the barrier's mailbox poll ({@link MAILBOX_POLL_MS}) and a margin, within
 * these bounds. A start time that comes late starts its runner at the barrier's next poll (the skew
 * shows it).
 */
const START_LEAD_MS = { min: 150, margin: 50, max: 5_000 };
/**
 * The share of the slowest confirmation's round trip that the start times' way takes: the
 * confirmations also opened their connections (TLS handshakes), the start times go out on them
 * warm. Measured at 64 runners on the test cluster: 30 to 35% (504 ms against 177 ms, 406 ms
 * against 122 ms).
 */
const START_LEAD_RTT_SHARE = 0.5;
/**
 * How long before the test can first end ({@link StartOptions.earliestEndS}) the barriers begin
 * to look for its end every {@link END_POLL_MS}, in ms.
 */
const END_EARLY_MS = 100;

/**
 * How far apart the node clocks of a run's runners may look ({@link nodeClocksApart}) before a
 * warning says so, in ms: well above the delays of the barrier lines (a runner ready last may have
 * one line only; the least delay of the 64 runners' ready lines was 385 ms once on the saturated
 * test cluster), far beyond what NTP lets through.
 */
const NODE_CLOCKS_WARN_MS = 2_000;

/**
 * How long after the scheduled instant a runner's started line may take before the runner is
 * started through the pod proxy instead, in ms.
 */
const START_CONFIRM_MS = 10_000;

/** A log follow that failed at once is sent again quickly: the Pod may go soon after. */
const FOLLOW_RETRY = { retries: 4, maxRetryTimeMs: 5_000, minTimeoutMs: 100 };

/**
 * The longest a runner's log follow may take to be taken before its Pod is deleted to end its
 * linger anyway, in ms: long enough for a follow refused at once (a 503) to be sent again.
 */
const FOLLOW_SETTLE_MS = 1_500;

/**
 * A follow out this long without an error answer is taken, in ms: the API server and the kubelet
 * answer a refusal at once, and send no headers for a log that is still empty (k6 runs `--quiet`),
 * so silence is how a follow in place looks. The follow reads the log from its start, so it only
 * has to reach the kubelet before the container is removed, which takes longer than k6's exit.
 */
const FOLLOW_QUIET_MS = 300;

/**
 * Opening a barrier container's follow: the kubelet may be busy (503s) while many Pods start at
 * once. A follow still refused after these (about 7 s) gives way to polling through the pod proxy.
 */
const BARRIER_FOLLOW_RETRY = { retries: 4, maxRetryTimeMs: 10_000, minTimeoutMs: 200 };

/** How many times a barrier container's follow that broke is opened again before the runner is polled through the pod proxy instead. */
const BARRIER_FOLLOW_ATTEMPTS = 5;

/** What a kubelet sends instead of a followed log when it cannot watch the file (kubelet `kuberuntime/logs`). */
const KUBELET_FOLLOW_FAILED = /^failed to create fsnotify watcher/;

/**
 * Creates an object, retrying transient API errors. When a retried create finds the object there
 * (409: an earlier attempt got through but its answer was lost), `read` gives it.
 */
async function createOrRead<T>(create: () => Promise<T>, read: () => Promise<T>): Promise<T> {
  let attempts = 0;
  return retrying(async () => {
    attempts++;
    try {
      return await create();
    } catch (error) {
      if (attempts > 1 && apiStatus(error) === 409) return read();
      throw error;
    }
  });
}

/** How many API requests of one kind the backend sends at once (creating and deleting Pods). */
const API_CONCURRENCY = 16;

/** Runs `fn` over `items`, at most `limit` at a time. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * A runner's follow of its barrier container's log (barrier-log.ts), from when the container runs
 * to the end of the runner's test.
 */
interface BarrierFollow {
  log: BarrierLog;
  /** The follow could not be kept: the runner is polled through the pod proxy instead. */
  failed: boolean;
}

/**
 * The status of a runner whose test runs, as its barrier container's log tells it: no VU count
 * (NaN), which the monitor takes from the runners' records instead (Runner.vusRecord).
 */
const RUNNING: K6Status = {
  status: K6_STATUS.Running,
  paused: false,
  running: true,
  stopped: false,
  vus: Number.NaN,
  vusMax: Number.NaN,
  tainted: false,
};

/** A status the orchestrator's barrier reads as "not yet" (k6 is still initialising VUs). */
const INITIALISING: K6Status = {
  status: K6_STATUS.InitVUs,
  paused: true,
  running: false,
  stopped: false,
  vus: 0,
  vusMax: 0,
  tainted: false,
};

/**
 * The Kubernetes backend: one Pod per runner on the user's cluster, the archive in a ConfigMap,
 * readiness and failures from a Pod watch, the k6 REST API through the API server's pod proxy
 * (`/api/v1/namespaces/NS/pods/NAME:6565/proxy/v1/status`, RBAC `pods/proxy`).
 *
 * Neither the barrier nor the monitor polls the runners through the API server: each runner's
 * barrier container prints when k6 is at status 4, its VU count while the test runs and the end of
 * its test (manifests.ts), and the backend follows that log, one request per runner for the whole
 * run. A runner's `api.status()` is answered from it: before the start, "initialising" until every
 * runner is ready, then one real `GET /v1/status` per runner, all at once, through the pod proxy
 * confirms it and opens the warm connection its start `PATCH` goes out on; after the start,
 * "running" until the end line, which also settles `testEnded`. A runner whose barrier container
 * failed, or whose log cannot be followed, is polled through the proxy instead.
 */
export class KubernetesBackend implements Backend {
  readonly name = 'kubernetes' as const;
  private readonly o: KubernetesBackendOptions;
  private readonly core: CoreV1Api;
  private pods: RunnerPods | undefined;
  private created = false;
  private runnerCount = 0;
  private readonly exits = new Map<number, RunnerExit>();
  /** Runners whose node went away with them (see {@link lostOf}): their logs cannot be read. */
  private readonly lost = new Set<number>();
  /** Logs of disrupted runners, read to the end as their Pods go away. */
  private readonly savedLogs = new Map<number, SavedLog>();
  /** Per runner: its barrier container's followed log, once its Pod runs. */
  private readonly barrierFollows = new Map<number, BarrierFollow>();
  /** Called when a runner's barrier log brings its ready, started or end line. */
  private readonly barrierChanged = new Set<() => void>();
  /** Runners asked to start (scheduled or through the pod proxy). */
  private readonly started = new Set<number>();
  /** The slowest round trip of the runners' confirmations through the pod proxy just before the start, in ms. */
  private slowestConfirmMs = 0;
  private cleanedUp = false;
  /**
   * Keeps the pod-proxy connections to the API server open between the barrier's confirmation and
   * the start (Node's default agent closes idle sockets after 5 s), so that every start `PATCH` goes
   * out on a warm TLS connection and the start skew is not a spread of handshakes.
   */
  private readonly agent = new https.Agent({ keepAlive: true, timeout: 120_000, maxSockets: Infinity });
  /** Aborts the followed logs of disrupted runners at cleanup (a node that is gone never ends them). */
  private readonly closing = new AbortController();

  constructor(options: KubernetesBackendOptions) {
    this.o = options;
    this.core = makeClient(options.kc, CoreV1Api);
  }

  /** Checks the credentials' permissions before anything is created. */
  async preflight(): Promise<void> {
    await checkPermissions(this.o.kc, this.o.namespace);
  }

  async launch(plan: RunPlan, archivePath: string): Promise<Runner[]> {
    const { namespace, runId, log } = this.o;
    const archive = await readFile(archivePath);
    if (archive.length > MAX_ARCHIVE_BYTES) {
      throw new ConfigurationError(
        `script: its k6 archive is ${(archive.length / 1048576).toFixed(2)} MiB, more than a ConfigMap holds (1 MiB); ` +
          'move large data files out of the script (load them from a URL in setup()), or build a runner image that contains them',
      );
    }
    this.runnerCount = plan.runners.length;
    const spec = { ...this.o, plan };
    this.pods = new RunnerPods(this.o.kc, namespace, runId, log);
    this.created = true;
    try {
      const configMap = await createOrRead(
        () => this.core.createNamespacedConfigMap({ namespace, body: archiveConfigMap(spec, archive) }),
        () => this.core.readNamespacedConfigMap({ namespace, name: runName(runId) }),
      );
      const owner = { name: runName(runId), uid: configMap.metadata!.uid! };
      await eachLimited(plan.runners, API_CONCURRENCY, async (runner) => {
        await createOrRead(
          () => this.core.createNamespacedPod({ namespace, body: runnerPod(spec, runner, owner) }),
          async () => undefined,
        );
      });
      await this.pods.start();
    } catch (error) {
      throw apiError(error, `creating the runners in namespace ${namespace}`);
    }
    log.info(
      `created ConfigMap ${runName(runId)} and ${plan.runners.length} runner Pods in namespace ${namespace}`,
    );
    return plan.runners.map((r) => this.runner(r.index));
  }

  private runner(index: number): Runner {
    const pods = this.pods!;
    const api = this.runnerApi(index);
    let testEnded!: (status: number) => void;
    const ended = new Promise<number>((resolve) => {
      testEnded = resolve;
    });
    const exited = new Promise<RunnerExit>((resolve) => {
      const unschedulableSince = { at: 0 };
      const lostSince = { at: 0 };
      const check = () => {
        const state = pods.state(index);
        if (state.kind === 'running' && state.barrier === 'running' && !this.barrierFollows.has(index))
          this.barrierFollows.set(index, this.followBarrier(index, state.pod, testEnded));
        if ((state.kind === 'running' || state.kind === 'ended') && state.disruption)
          this.saveLog(index, state.pod);
        if (state.kind === 'running' && state.disruption) lostSince.at ||= Date.now();
        const lost = this.lostOf(index, state, lostSince.at);
        if (lost) {
          this.lost.add(index);
          // Its k6 may still run on the silent node: the pod proxy reaches the Pod's IP directly.
          api.stop().catch(() => {});
        }
        const exit = this.exitOf(index, state, unschedulableSince) ?? lost;
        if (exit) {
          this.exits.set(index, exit);
          off();
          clearInterval(timer);
          resolve(exit);
        }
      };
      const off = pods.onChange(check);
      // Timeouts advance without Pod events too.
      const timer = setInterval(check, 1000);
      timer.unref();
      check();
    });
    return {
      index,
      api,
      exited,
      testEnded: ended,
      vusRecord: () => this.barrierFollows.get(index)?.log.vusRecord(),
      kill: async () => {
        const state = pods.state(index);
        if (state.kind !== 'none') {
          pods.deleting.add(state.pod);
          await retrying(() =>
            this.core.deleteNamespacedPod({
              name: state.pod,
              namespace: this.o.namespace,
              gracePeriodSeconds: 0,
            }),
          ).catch((error: unknown) =>
            this.o.log.warning(
              `runner ${index}: deleting Pod ${state.pod} failed: ${apiErrorMessage(error)}`,
            ),
          );
        }
        await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000).unref())]);
      },
      terminate: async () => {
        // Deleting the Pod with its grace period sends k6 SIGTERM, which ends its --linger; k6 then
        // writes its compact summary to the log, which is followed to the end (from shortly after
        // the start, else from now: the Pod object goes once the container ended). Marked as ours,
        // so it is not a disruption.
        const state = pods.state(index);
        if (state.kind !== 'running') return;
        const log = this.saveLog(index, state.pod);
        pods.deleting.add(state.pod);
        pods.terminated.add(state.pod);
        // The log is followed before the Pod is deleted, so that what k6 writes on SIGTERM (its
        // summary) is read: the Pod is deleted once the follow is taken (at once for a follow taken
        // during the test; a follow refused at once, a 503, is sent again first), or after
        // FOLLOW_SETTLE_MS whatever happened to it.
        await Promise.race([
          log.inPlace.catch(() => {}),
          new Promise((r) => setTimeout(r, FOLLOW_SETTLE_MS)),
        ]);
        await this.core.deleteNamespacedPod({ name: state.pod, namespace: this.o.namespace }).catch(() => {});
      },
      collect: async () => {
        const state = pods.state(index);
        if (state.kind === 'none') return { logTail: '' };
        const nodeName = pods.pods.get(index)?.spec?.nodeName;
        const node = nodeName ? { node: nodeName } : {};
        if (this.lost.has(index)) return { logTail: '', unreadable: `its node ${nodeName} is gone`, ...node };
        try {
          const { log, summary, rest } = await this.readLog(index, state.pod);
          // k6's own log lines; its end-of-test text summary (every line indented) is left out.
          const logTail = rest
            .split('\n')
            .filter((line) => line.trim() && !/^\s/.test(line))
            .slice(-15)
            .join('\n');
          if (summary === undefined && KUBELET_FOLLOW_FAILED.test(log)) {
            // The kubelet answers a follow it cannot watch with this line and a 200.
            const unreadable = `the kubelet of node ${nodeName ?? '(unknown)'} could not follow its log: "${log.trim()}" (the node's fs.inotify.max_user_instances is used up)`;
            return { logTail, unreadable, ...node };
          }
          return summary === undefined ? { logTail, ...node } : { summary, logTail, ...node };
        } catch (error) {
          const unreadable = `the log of Pod ${state.pod} could not be read: ${apiErrorMessage(error)}`;
          return { logTail: `(${unreadable})`, unreadable, ...node };
        }
      },
    };
  }

  /**
   * Follows runner `index`'s barrier container log (Pod `pod`) into a {@link BarrierLog}, calling
   * `onEnd` with the end status once the end line arrives. A follow that was taken and breaks (or
   * ends) before the end line is opened again, from the log's start, while the container runs,
   * {@link BARRIER_FOLLOW_ATTEMPTS} times in all. A follow refused after its retries, or broken
   * too often, is `failed`: the runner is polled through the pod proxy from then on.
   */
  private followBarrier(index: number, pod: string, onEnd: (status: number) => void): BarrierFollow {
    let ready = false;
    const follow: BarrierFollow = {
      log: new BarrierLog(() => {
        if (!ready && follow.log.readyAtMs !== undefined && !follow.log.end) {
          ready = true;
          this.o.log.debug(`runner ${index}: ready`);
        }
        if (follow.log.end) {
          const { atMs, status } = follow.log.end;
          this.o.log.debug(
            `runner ${index}: its test ended (status ${status}), seen ${Date.now() - atMs} ms later`,
          );
          onEnd(status);
        }
        for (const listener of this.barrierChanged) listener();
      }),
      failed: false,
    };
    const open = (attempt: number) => {
      follow.log.reset();
      const followed = followPodLog(
        this.o.kc,
        { namespace: this.o.namespace, name: pod, container: CONTAINERS.barrier },
        {
          timeoutMs: this.wholeRunFollowMs,
          quietMs: FOLLOW_QUIET_MS,
          policy: BARRIER_FOLLOW_RETRY,
          signal: this.closing.signal,
          agent: this.agent,
          onData: (chunk) => follow.log.feed(chunk),
        },
      );
      let taken = false;
      followed.inPlace.then(
        () => {
          taken = true;
          this.o.log.debug(`runner ${index}: following its barrier log (attempt ${attempt})`);
        },
        () => {},
      );
      // The stream ends when the container does; before the end line, it broke or was refused.
      const settled = () => {
        if (this.closing.signal.aborted || follow.log.end) return;
        const state = this.pods?.state(index);
        const runs = state?.kind === 'running' && state.pod === pod && state.barrier === 'running';
        if (taken && runs && attempt < BARRIER_FOLLOW_ATTEMPTS) open(attempt + 1);
        else follow.failed = true;
      };
      followed.text.then(settled, (error: unknown) => {
        this.o.log.debug(`runner ${index}: its barrier log follow ended: ${apiErrorMessage(error)}`);
        settled();
      });
    };
    open(1);
    return follow;
  }

  /**
   * The longest a log follow that lasts the whole run may take, in ms: the runner Pod's
   * `activeDeadlineSeconds` and a minute for the container to end and its log to be read.
   */
  private get wholeRunFollowMs(): number {
    return (this.o.activeDeadlineSeconds + 60) * 1000;
  }

  /**
   * Follows runner `index`'s k6 log while its test runs ({@link FOLLOW_AFTER_START_MS} after its
   * start), for the whole test. A follow that ends or breaks while the runner still runs, neither
   * told to end nor disrupted (an idle timeout of a load balancer before the API server, an API
   * server restart), is forgotten, so that the end of the runner follows its log anew.
   */
  private followEarly(index: number): void {
    const state = this.pods?.state(index);
    if (this.closing.signal.aborted || this.savedLogs.has(index) || state?.kind !== 'running') return;
    const { pod } = state;
    const log = this.saveLog(index, pod, this.wholeRunFollowMs);
    const cutShort = () => {
      const now = this.pods?.state(index);
      if (
        this.savedLogs.get(index) === log &&
        now?.kind === 'running' &&
        !now.disruption &&
        !this.pods!.terminated.has(pod)
      ) {
        this.o.log.debug(
          `runner ${index}: its log follow ended while it runs; it is followed anew at its end`,
        );
        this.savedLogs.delete(index);
      }
    };
    void log.followed.then(cutShort);
  }

  /**
   * A runner's log (with the summary k6 writes on SIGTERM), followed to the end: from shortly after
   * the start ({@link followEarly}), else from the moment its linger is ended or a disruption shows
   * (its Pod goes away soon after its k6 container ends).
   * @param timeoutMs the longest the follow may take, in ms.
   */
  private saveLog(index: number, pod: string, timeoutMs = FOLLOW_TIMEOUT_MS): SavedLog {
    const saved = this.savedLogs.get(index);
    if (saved) return saved;
    let sofar = '';
    const followed = followPodLog(
      this.o.kc,
      { namespace: this.o.namespace, name: pod, container: CONTAINERS.k6 },
      {
        timeoutMs,
        quietMs: FOLLOW_QUIET_MS,
        policy: FOLLOW_RETRY,
        signal: this.closing.signal,
        agent: this.agent,
        onData: (chunk) => {
          sofar += chunk;
        },
      },
    );
    const text = followed.text.catch((error: unknown) => {
      if (this.closing.signal.aborted) throw error;
      return this.plainLog(pod);
    });
    text.catch(() => {});
    const log = {
      inPlace: followed.inPlace,
      text,
      sofar: () => sofar,
      followed: followed.text.then(
        () => {},
        () => {},
      ),
    };
    this.savedLogs.set(index, log);
    return log;
  }

  /** The k6 container's log of `pod`, retried while the API server fails transiently. */
  private plainLog(pod: string): Promise<string> {
    return retrying(
      () =>
        this.core.readNamespacedPodLog({ name: pod, namespace: this.o.namespace, container: CONTAINERS.k6 }),
      DEFAULT_RETRY,
      this.closing.signal,
    );
  }

  /**
   * Runner `index`'s log, with its summary split off ({@link extractSummary}): the followed one,
   * else read now. A runner that completed (its container ended with a completed exit code) and
   * whose followed log already holds its compact summary gives that log at once: a kubelet ends a
   * follow only when it next looks at the container (kubelet `kuberuntime/logs`, at most 1 s after
   * the last write), while what the container wrote reaches the follow as it is written.
   */
  private async readLog(
    index: number,
    pod: string,
  ): Promise<{ log: string } & ReturnType<typeof extractSummary>> {
    const saved = this.savedLogs.get(index);
    const exit = this.exits.get(index);
    if (saved && exit && runnerCompleted(exit.code)) {
      const sofar = saved.sofar();
      const early = extractSummary(sofar);
      if (early.format === 'compact') return { log: sofar, ...early };
    }
    const log = await (saved ? saved.text : this.plainLog(pod));
    return { log, ...extractSummary(log) };
  }

  /**
   * A runner whose Pod was taken away (deleted, evicted, its node tainted NotReady or unreachable)
   * but whose node never reports its container's end: once the Pod's grace period
   * (`deletionTimestamp`) is over by {@link LOST_AFTER_MS}, the node is taken for gone (its kubelet
   * stopped: the node is NotReady) and the runner for lost, with whatever it measured.
   */
  private lostOf(index: number, state: PodState, disruptedAt: number): RunnerExit | undefined {
    if (state.kind !== 'running' || !state.disruption || !disruptedAt) return undefined;
    const pod = this.pods!.pods.get(index);
    // Deleted: the end of its grace period; else (a kubelet's own eviction) the Pod's grace period from now.
    const deleted = pod?.metadata?.deletionTimestamp;
    const deadline = deleted
      ? new Date(deleted).getTime()
      : disruptedAt + (pod?.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    if (Date.now() < Math.max(deadline, disruptedAt) + LOST_AFTER_MS) return undefined;
    const { what, by } = state.disruption;
    return {
      code: null,
      reason:
        `runner ${index} was lost on node ${state.node ?? '(unknown)'}: its Pod was ${what}${by ? ` (${by})` : ''} ` +
        `but the node never reported the end of its container; the node is NotReady or unreachable (kubelet stopped)`,
    };
  }

  private exitOf(index: number, state: PodState, unschedulableSince: { at: number }): RunnerExit | undefined {
    if (state.kind === 'ended') {
      if (state.disruption) {
        const { what, message } = state.disruption;
        return {
          code: state.code,
          reason: `runner ${index} was ${what} on node ${state.node ?? '(unknown)'}${message ? `: ${message}` : ''}`,
        };
      }
      if (state.reason === 'OOMKilled') {
        const limit = this.o.resources?.limits?.memory;
        return {
          code: state.code,
          signal: state.reason,
          reason: `runner ${index} was OOMKilled on node ${state.node ?? '(unknown)'}: it used more than its memory limit${limit ? ` of ${limit}` : ''} (resources.limits.memory)`,
        };
      }
      return { code: state.code, ...(state.reason ? { signal: state.reason } : {}) };
    }
    if (state.kind === 'failed') return { code: null, reason: `Pod ${state.pod}: ${state.reason}` };
    if (state.kind === 'pending' && state.unschedulable) {
      unschedulableSince.at ||= Date.now();
      if (Date.now() - unschedulableSince.at >= this.o.scheduleTimeoutS * 1000) {
        return {
          code: null,
          reason: `Pod ${state.pod} could not be placed within ${this.o.scheduleTimeoutS} s: ${state.unschedulable}`,
        };
      }
    } else {
      unschedulableSince.at = 0;
    }
    return undefined;
  }

  /**
   * Runner `index`'s REST API: its status from its barrier container's log where it can be
   * followed (see the class), the rest through the pod proxy.
   */
  private runnerApi(index: number): RunnerApi {
    const proxied = runnerApi(this.proxyRequest(index));
    let confirmed: K6Status | undefined;
    return {
      ...proxied,
      start: async () => {
        this.markStarted(index);
        return proxied.start();
      },
      status: async (timeoutMs) => {
        const follow = this.barrierFollows.get(index);
        const end = follow?.log.end;
        if (this.started.has(index)) {
          if (end)
            return {
              ...RUNNING,
              status: end.status,
              running: false,
              vus: 0,
              stopped: end.status === K6_STATUS.Interrupted,
            };
          const state = this.pods!.state(index);
          if (follow && !follow.failed && state.kind === 'running' && state.barrier === 'running')
            return RUNNING;
          return proxied.status(timeoutMs);
        }
        const state = this.pods!.state(index);
        if (state.kind !== 'running') throw new Error(`runner ${index} has no running Pod (${state.kind})`);
        const gate = this.gate(index);
        // Until every runner is ready (or failed), none is confirmed: then the orchestrator's next
        // poll sends all confirmations at once, which opens one warm connection per runner for the
        // start requests (sequential confirmations would leave a few sockets for all), and times
        // their way through the API server for a scheduled start's lead.
        if (gate === 'waiting' || (gate === 'ready' && !this.allBarriersDone())) return INITIALISING;
        if (confirmed && gate === 'ready') return confirmed;
        const sentAt = Date.now();
        const status = await proxied.status(timeoutMs);
        if (status.status === K6_STATUS.PausedBeforeRun && gate === 'ready') {
          confirmed = status;
          this.slowestConfirmMs = Math.max(this.slowestConfirmMs, Date.now() - sentAt);
        }
        return status;
      },
    };
  }

  /**
   * Marks runner `index` as started: its status comes from its barrier log from now on, and its k6
   * container's log is followed from shortly after the start, so that ending its linger later waits
   * for nothing but the delete (a follow is only taken after a quiet spell).
   * @param startsInMs how long until its start, in ms (a scheduled start's lead).
   */
  private markStarted(index: number, startsInMs = 0): void {
    if (this.started.has(index)) return;
    this.started.add(index);
    setTimeout(() => this.followEarly(index), startsInMs + FOLLOW_AFTER_START_MS).unref();
  }

  /**
   * The scheduled start ({@link Backend.startAll}): every runner's barrier container gets one start
   * time of the nodes' clock in its mailbox (`PUT /v1/setup` on {@link BARRIER_PORT} through the pod
   * proxy, all at once) and un-pauses its runner itself at that instant, so the spread of those
   * requests through the API server is not the start skew. The start time is this machine's clock
   * moved to the nodes' by the least delay seen of the barriers' ready and clock lines (a bound
   * from above on how far this clock is ahead, tight once one line came quickly; the nodes' clocks
   * are taken to agree with each other, as NTP keeps them), plus a lead
   * ({@link START_LEAD_MS}). Each start is confirmed by its `k6d-started` line, whose node times
   * give the offsets. A runner whose start time could not be delivered, or whose line does not come
   * within {@link START_CONFIRM_MS}, is started through the pod proxy at that instant or then.
   * @returns undefined when some runner's barrier log is not followed (or not ready): its start could
   *   not be confirmed, so every runner is un-paused through the pod proxy instead.
   * @throws Error naming a runner that could not be started at all.
   */
  async startAll(runners: readonly Runner[], options: StartOptions): Promise<ScheduledStart | undefined> {
    const logs: BarrierLog[] = [];
    for (const runner of runners) {
      const follow = this.barrierFollows.get(runner.index);
      if (!follow || follow.failed || follow.log.aheadMs === undefined) return undefined;
      logs.push(follow.log);
    }
    const clocks = nodeClocksApart(logs.map((l) => l.aheadMs!));
    const aheadMs = logs[clocks.ahead]!.aheadMs!;
    if (clocks.gapMs > NODE_CLOCKS_WARN_MS) {
      const node = (i: number) => this.pods!.pods.get(runners[i]!.index)?.spec?.nodeName ?? '(unknown)';
      this.o.log.warning(
        `the runners' node clocks look at least ${Math.round(clocks.gapMs)} ms apart (node ${node(clocks.behind)} of runner ${runners[clocks.behind]!.index} behind node ${node(clocks.ahead)} of runner ${runners[clocks.ahead]!.index}, by their barrier logs): every runner starts at one instant of its own node's clock, so they may start that far apart, and the start skew is measured by those clocks; keep the nodes' clocks synchronised (NTP)`,
      );
    }
    const rttMs = this.slowestConfirmMs;
    const leadMs = Math.min(
      START_LEAD_MS.max,
      Math.max(START_LEAD_MS.min, START_LEAD_RTT_SHARE * rttMs + MAILBOX_POLL_MS + START_LEAD_MS.margin),
    );
    const sentAtMs = Date.now();
    const startAt = Math.round(sentAtMs - aheadMs + leadMs);
    // From shortly before the test can first end, the barriers look for its end more often.
    const mailbox = {
      startAt,
      ...(options.earliestEndS > 0
        ? { endsFrom: Math.round(startAt + options.earliestEndS * 1000 - END_EARLY_MS) }
        : {}),
    };
    this.o.log.debug(
      `starting ${runners.length} runners at ${new Date(startAt).toISOString()} of their clocks (in ${leadMs.toFixed(0)} ms; this clock is at most ${aheadMs} ms ahead; slowest confirmation ${rttMs} ms)`,
    );
    const starts = await Promise.all(runners.map((r, i) => this.startAt(r, logs[i]!, mailbox, aheadMs)));
    const range = (values: number[]) =>
      values.length > 0 ? `${Math.min(...values)} to ${Math.max(...values)} ms` : 'none';
    const set = starts.flatMap((s) => (s.setBeforeMs === undefined ? [] : [s.setBeforeMs]));
    this.o.log.debug(
      `start times set ${range(set)} before the instant; runners un-paused ${range(starts.map((s) => s.sentAtMs - startAt))} after it, k6 confirmed ${range(starts.map((s) => s.atMs - s.sentAtMs))} after that`,
    );
    const first = Math.min(...starts.map((s) => s.sentAtMs));
    const confirmed = starts.map((s) => s.atMs);
    return {
      startedAtMs: Math.min(Date.now(), Math.max(sentAtMs, startAt + aheadMs)),
      offsetsMs: starts.map((s) => s.sentAtMs - first),
      confirmedSpreadMs: Math.max(...confirmed) - Math.min(...confirmed),
    };
  }

  /**
   * Starts one runner at `startAt` (epoch ms of the nodes' clock) through its barrier container's
   * mailbox, or through the pod proxy when that fails ({@link startAll}).
   * @returns when it was un-paused and when k6 confirmed it, in epoch ms of the nodes' clock (both
   *   the confirmation for a runner started through the pod proxy: its request's way is unknown),
   *   and how long before the instant its start time was set, in ms (undefined when it was not).
   */
  private async startAt(
    runner: Runner,
    log: BarrierLog,
    mailbox: { startAt: number; endsFrom?: number },
    aheadMs: number,
  ): Promise<{ sentAtMs: number; atMs: number; setBeforeMs?: number }> {
    const { startAt } = mailbox;
    const { index } = runner;
    const nodeNow = () => Date.now() - aheadMs;
    this.markStarted(index, Math.max(0, startAt - nodeNow()));
    const setBeforeMs = await this.proxyRequest(index, BARRIER_PORT)('PUT', '/v1/setup', mailbox).then(
      () => startAt - nodeNow(),
      (error: unknown) => {
        this.o.log.debug(`runner ${index}: its start time could not be set: ${errorMessage(error)}`);
        return undefined;
      },
    );
    const delivered = setBeforeMs !== undefined;
    const wait = (untilNodeMs: number, done: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!done() && nodeNow() < untilNodeMs) return;
          clearTimeout(timer);
          this.barrierChanged.delete(check);
          resolve();
        };
        const timer = setTimeout(check, Math.max(0, untilNodeMs - nodeNow()));
        this.barrierChanged.add(check);
        void runner.exited.then(check);
        check();
      });
    if (delivered)
      await wait(startAt + START_CONFIRM_MS, () => log.started !== undefined || this.exits.has(index));
    else await wait(startAt, () => this.exits.has(index));
    if (log.started) return { ...log.started, ...(delivered ? { setBeforeMs } : {}) };
    this.o.log.debug(
      `runner ${index}: ${delivered ? 'no started line' : 'no start time'}; started through the pod proxy`,
    );
    const proxied = runnerApi(this.proxyRequest(index));
    const status = await proxied.status();
    if (status.status < K6_STATUS.Running) await proxied.start();
    const atMs = nodeNow();
    return { sentAtMs: atMs, atMs, ...(delivered ? { setBeforeMs } : {}) };
  }

  /**
   * Runner `index`'s barrier: `ready` once its barrier container printed that k6 is at status 4,
   * `failed` when that container failed or its log cannot be followed (the runner is then polled
   * through the pod proxy), else `waiting`.
   */
  private gate(index: number): 'waiting' | 'ready' | 'failed' {
    const state = this.pods!.state(index);
    const follow = this.barrierFollows.get(index);
    if (state.kind !== 'running') return 'waiting';
    if (follow?.log.readyAtMs !== undefined || state.barrier === 'exited') return 'ready';
    if (state.barrier === 'failed' || follow?.failed) return 'failed';
    return 'waiting';
  }

  /** Whether every runner's Pod runs and its barrier is done (ready or failed). */
  private allBarriersDone(): boolean {
    for (let i = 0; i < this.runnerCount; i++) if (this.gate(i) === 'waiting') return false;
    return true;
  }

  /**
   * A {@link RunnerRequest} through the API server's pod proxy to the runner's current Pod, to its
   * k6 REST API or (`port` {@link BARRIER_PORT}) its barrier container's. A start or stop (`PATCH`),
   * or a start time, that fails in passing (5xx, a dropped connection, a timeout) is sent again: a
   * stop that never arrives would make the run kill the runner and lose its data. Status and
   * metrics polls are repeated by their callers anyway.
   */
  private proxyRequest(index: number, port = REST_PORT): RunnerRequest {
    return async (method, path, body, timeoutMs) => {
      const state = this.pods!.state(index);
      if (state.kind !== 'running') throw new Error(`runner ${index} has no running Pod (${state.kind})`);
      const url = `/api/v1/namespaces/${encodeURIComponent(this.o.namespace)}/pods/${encodeURIComponent(state.pod)}:${port}/proxy${path}`;
      const once = () => this.proxyOnce(url, method, path, body, timeoutMs);
      return method === 'PATCH' || port === BARRIER_PORT ? retrying(once, PATCH_RETRY) : once();
    };
  }

  /**
   * One request to `apiPath` on the API server, for the runner's REST API `method path`.
   * @throws Error with the HTTP status as `code` when the answer is an error status.
   */
  private async proxyOnce(
    apiPath: string,
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number = REST_TIMEOUT_MS.other,
  ): Promise<unknown> {
    const cluster = this.o.kc.getCurrentCluster()!;
    const url = new URL(`${cluster.server.replace(/\/$/, '')}${apiPath}`);
    const options: https.RequestOptions = { method, headers: {} };
    await this.o.kc.applyToHTTPSOptions(options);
    // The client makes a new agent (a new TLS connection) per call; ours pools them. The TLS
    // options (ca, cert, key) stay on the request, and a proxy-url keeps the client's agent.
    if (url.protocol === 'https:' && !cluster.proxyUrl) options.agent = this.agent;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload) options.headers = { ...options.headers, 'content-type': 'application/json' };
    return new Promise((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, options, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          const status = response.statusCode ?? 500;
          if (status >= 300) {
            const error = new RunnerHttpError(method, `${path} through the pod proxy`, status, text);
            reject(Object.assign(error, { code: status }));
            return;
          }
          try {
            resolve(parseBody(method, path, text));
          } catch (error) {
            reject(error);
          }
        });
      });
      request.setTimeout(timeoutMs, () =>
        request.destroy(Object.assign(new Error(`${method} ${path}: timed out`), { code: 'ETIMEDOUT' })),
      );
      request.on('error', reject);
      request.end(payload);
    });
  }

  /** Whether every runner ended on its own with a completed exit code. */
  private allCompleted(): boolean {
    return (
      this.exits.size === this.runnerCount && [...this.exits.values()].every((e) => runnerCompleted(e.code))
    );
  }

  async cleanup(): Promise<void> {
    if (this.cleanedUp) return;
    if (!this.created) return closePooledConnections(this.o.kc);
    this.cleanedUp = true;
    this.pods?.stop();
    this.closing.abort();
    this.agent.destroy();
    const { namespace, log, cleanup } = this.o;
    const keep = cleanup === 'never' || (cleanup === 'on-success' && !this.allCompleted());
    if (keep) {
      // Never leave a runner running: stop what still runs, keep the rest for inspection. A runner
      // whose exit is known has ended, even while its Pod's phase still lags behind (the kubelet
      // reports Succeeded a moment after the containers end).
      const live = [...(this.pods?.pods.entries() ?? [])]
        .filter(
          ([index, p]) => !this.exits.has(index) && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''),
        )
        .map(([, p]) => p);
      await eachLimited(live, API_CONCURRENCY, async (pod) => {
        await retrying(() =>
          this.core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }),
        ).catch((error: unknown) =>
          log.warning(`cleanup: deleting Pod ${pod.metadata?.name} failed: ${apiErrorMessage(error)}`),
        );
      });
      log.info(
        `cleanup ${cleanup}: kept the run's objects; delete them with: kubectl delete configmap,pod -n ${namespace} -l ${LABELS.runId}=${this.o.runId}`,
      );
    } else await deleteRun(this.o.kc, namespace, this.o.runId, log);
    closePooledConnections(this.o.kc);
  }
}

/**
 * Deletes every object of a run, by its run-id label: the ConfigMap (whose dependents the garbage
 * collector removes) and the Pods directly too so nothing waits for the collector, then waits
 * until no Pod of the run is left (at most `waitS` seconds). Every request is retried while
 * the API server fails transiently; a list that keeps failing counts as objects left.
 * @returns the names of objects still present after the wait (empty when all are gone).
 */
export async function deleteRun(
  kc: KubeConfig,
  namespace: string,
  runId: string,
  log: Pick<Logger, 'warning'>,
  waitS = 60,
): Promise<string[]> {
  const core = makeClient(kc, CoreV1Api);
  const labelSelector = `${LABELS.runId}=${runId}`;
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await retrying(fn);
    } catch (error) {
      if (apiStatus(error) !== 404)
        log.warning(`cleanup: deleting ${what} failed: ${apiErrorMessage(error)}`);
    }
  };
  /** The run's objects of one kind; `undefined` (with a warning) when they cannot be listed. */
  const list = async <T>(what: string, fn: () => Promise<{ items: T[] }>): Promise<T[] | undefined> => {
    try {
      return (await retrying(fn)).items;
    } catch (error) {
      log.warning(`cleanup: listing the run's ${what} failed: ${apiErrorMessage(error)}`);
      return undefined;
    }
  };
  const configMaps = await list('ConfigMaps', () =>
    core.listNamespacedConfigMap({ namespace, labelSelector }),
  );
  await eachLimited(configMaps ?? [], API_CONCURRENCY, (cm) =>
    attempt(`ConfigMap ${cm.metadata?.name}`, () =>
      core.deleteNamespacedConfigMap({
        name: cm.metadata!.name!,
        namespace,
        propagationPolicy: 'Background',
      }),
    ),
  );
  const deadline = Date.now() + waitS * 1000;
  // Pods already terminating are deleted too, at once: one on a node that is gone never ends by itself.
  const deleted = new Set<string>();
  for (;;) {
    const pods = await list('Pods', () => core.listNamespacedPod({ namespace, labelSelector }));
    const toDelete = (pods ?? []).filter((p) => !deleted.has(p.metadata?.uid ?? ''));
    await eachLimited(toDelete, API_CONCURRENCY, async (pod) => {
      deleted.add(pod.metadata?.uid ?? '');
      await attempt(`Pod ${pod.metadata?.name}`, () =>
        core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }),
      );
    });
    const left = [
      ...(configMaps ? [] : [`the ConfigMaps of run ${runId} (unlisted)`]),
      ...(pods ? pods.map((p) => `Pod ${p.metadata?.name}`) : [`the Pods of run ${runId} (unlisted)`]),
    ];
    if (left.length === 0 || Date.now() > deadline) {
      if (left.length > 0) log.warning(`cleanup: still present after ${waitS} s: ${left.join(', ')}`);
      return left;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
