import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { runnerCompleted } from '../../k6/exit-codes.ts';
import { countInsufficientVUs } from '../../k6/log.ts';
import type { Logger } from '../../log.ts';
import type { RunnerExit } from '../../plan.ts';
import type { Runner } from '../backend.ts';
import { DEFAULT_RETRY, type FollowedLog, type LogFollower, retrying } from './api-client.ts';
import { apiErrorMessage } from './api-errors.ts';
import { FOLLOW_QUIET_MS } from './barrier/follow.ts';
import type { BackendClock } from './clock.ts';
import { extractSummary } from './log-summary.ts';
import { CONTAINERS } from './names.ts';
import type { PodState } from './pods.ts';

/**
 * How long after its start a runner's k6 log is followed, in ms: late enough not to load the API
 * server while the start requests are answered (the start skew counts).
 */
export const FOLLOW_AFTER_START_MS = 1_000;

/** How long a followed log of a disrupted runner may take: its Pod's grace period (30 s) and a margin, in ms. */
export const FOLLOW_TIMEOUT_MS = 60_000;

/**
 * A runner Pod's log follow that failed at once is sent again quickly: the Pod may go soon after
 * (the k6 log here, the interval receiver's in receiver/collect.ts).
 */
export const FOLLOW_RETRY = { retries: 4, maxRetryTimeMs: 5_000, minTimeoutMs: 100 };

/** What a kubelet sends instead of a followed log when it cannot watch the file (kubelet `kuberuntime/logs`). */
const KUBELET_FOLLOW_FAILED = /^failed to create fsnotify watcher/;

/** A runner's followed k6 log: `text` falls back to a plain read when the follow fails. */
export interface SavedLog extends FollowedLog {
  /** Resolves when the follow itself ends (the container ended) or breaks; never rejects. */
  followed: Promise<void>;
  /** What the follow has read so far. */
  sofar(): string;
}

/**
 * Whether a runner's k6 container never started, so that its Pod has no log to read: its Pod is
 * still pending (unschedulable, or its image being pulled), or it failed (an image pull error, a
 * bad config) while its k6 container's status (`status.containerStatuses[]`) shows neither a
 * running nor a terminated state, now or before (`lastState`).
 */
export function neverStarted(state: PodState, pod: V1Pod | undefined): boolean {
  if (state.kind === 'pending') return true;
  if (state.kind !== 'failed') return false;
  const k6 = pod?.status?.containerStatuses?.find((c) => c.name === CONTAINERS.k6);
  return !(k6?.state?.running || k6?.state?.terminated || k6?.lastState?.terminated);
}

/** What {@link RunnerLogs} needs. */
export interface RunnerLogsOptions {
  /** Follows a container's log of the run (api-client.ts). */
  follow: LogFollower;
  api: Pick<CoreV1Api, 'readNamespacedPodLog'>;
  namespace: string;
  /** The runners' Pods (pods.ts `RunnerPods`): their states, newest objects, and the Pods ended on purpose. */
  pods: {
    state(index: number): PodState;
    readonly pods: ReadonlyMap<number, V1Pod>;
    readonly terminated: ReadonlySet<string>;
  };
  log: Pick<Logger, 'debug'>;
  clock: BackendClock;
  /** Aborted at cleanup: the follows end, and a failed one is not read again. */
  signal: AbortSignal;
  /** The longest a follow that lasts the whole run may take, in ms. */
  wholeRunMs: number;
}

/**
 * The runners' k6 logs: owns the followed log of each runner that started or was disrupted (its
 * summary is what k6 writes last, and its Pod goes soon after), and reads what a runner left
 * ({@link collect}).
 */
export class RunnerLogs {
  private readonly saved = new Map<number, SavedLog>();
  private readonly o: RunnerLogsOptions;

  constructor(options: RunnerLogsOptions) {
    this.o = options;
  }

  /**
   * Follows runner `index`'s k6 log {@link FOLLOW_AFTER_START_MS} after its start, so that ending
   * its linger later waits for nothing but the delete (a follow is only taken after a quiet spell).
   * @param startsInMs how long until its start, in ms (a scheduled start's lead).
   */
  followAfterStart(index: number, startsInMs: number): void {
    this.o.clock.timer(startsInMs + FOLLOW_AFTER_START_MS, () => this.followEarly(index));
  }

  /**
   * Follows runner `index`'s k6 log while its test runs, for the whole test. A follow that ends or
   * breaks while the runner still runs, neither told to end nor disrupted (an idle timeout of a
   * load balancer before the API server, an API server restart), is forgotten, so that the end of
   * the runner follows its log anew.
   */
  private followEarly(index: number): void {
    const { pods, signal } = this.o;
    const state = pods.state(index);
    if (signal.aborted || this.saved.has(index) || state.kind !== 'running') return;
    const { pod } = state;
    const log = this.save(index, pod, this.o.wholeRunMs);
    const cutShort = () => {
      const now = pods.state(index);
      if (
        this.saved.get(index) === log &&
        now.kind === 'running' &&
        !now.disruption &&
        !pods.terminated.has(pod)
      ) {
        this.o.log.debug(
          `runner ${index}: its log follow ended while it runs; it is followed anew at its end`,
        );
        this.saved.delete(index);
      }
    };
    void log.followed.then(cutShort);
  }

  /**
   * A runner's log (with the summary k6 writes on SIGTERM), followed to the end: from shortly after
   * the start ({@link followAfterStart}), else from the moment its linger is ended or a disruption
   * shows (its Pod goes away soon after its k6 container ends). A runner already followed keeps
   * its follow.
   * @param timeoutMs the longest the follow may take, in ms.
   */
  save(index: number, pod: string, timeoutMs = FOLLOW_TIMEOUT_MS): SavedLog {
    const saved = this.saved.get(index);
    if (saved) return saved;
    let sofar = '';
    const followed = this.o.follow(
      { name: pod, container: CONTAINERS.k6 },
      {
        timeoutMs,
        quietMs: FOLLOW_QUIET_MS,
        policy: FOLLOW_RETRY,
        onData: (chunk) => {
          sofar += chunk;
        },
      },
    );
    const text = followed.text.catch((error: unknown) => {
      if (this.o.signal.aborted) throw error;
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
    this.saved.set(index, log);
    return log;
  }

  /** The k6 container's log of `pod`, retried while the API server fails transiently. */
  private plainLog(pod: string): Promise<string> {
    return retrying(
      () =>
        this.o.api.readNamespacedPodLog({ name: pod, namespace: this.o.namespace, container: CONTAINERS.k6 }),
      DEFAULT_RETRY,
      this.o.signal,
    );
  }

  /**
   * Runner `index`'s log, with its summary split off ({@link extractSummary}): the followed one,
   * else read now. A runner that completed (its container ended with a completed exit code) and
   * whose followed log already holds its compact summary gives that log at once: a kubelet ends a
   * follow only when it next looks at the container (kubelet `kuberuntime/logs`, at most 1 s after
   * the last write), while what the container wrote reaches the follow as it is written.
   */
  private async read(
    index: number,
    pod: string,
    exit: RunnerExit | undefined,
  ): Promise<{ log: string } & ReturnType<typeof extractSummary>> {
    const saved = this.saved.get(index);
    if (saved && exit && runnerCompleted(exit.code)) {
      const sofar = saved.sofar();
      const early = extractSummary(sofar);
      if (early.format === 'compact') return { log: sofar, ...early };
    }
    const log = await (saved ? saved.text : this.plainLog(pod));
    return { log, ...extractSummary(log) };
  }

  /**
   * What runner `index` left ({@link Runner.collect}): its summary, the last 15 of k6's own log lines
   * (its end-of-test text summary, every line indented, left out), its node, and why nothing could
   * be read: its node is gone (`lost`), the kubelet could not follow its log (the node's
   * `fs.inotify.max_user_instances` used up), or the read failed.
   * @param exit the runner's exit, when known. @param lost whether it was lost with its node.
   */
  async collect(index: number, exit: RunnerExit | undefined, lost: boolean): ReturnType<Runner['collect']> {
    const state = this.o.pods.state(index);
    if (state.kind === 'none') return { logTail: '' };
    const nodeName = this.o.pods.pods.get(index)?.spec?.nodeName;
    const node = nodeName ? { node: nodeName } : {};
    if (lost) return { logTail: '', unreadable: `its node ${nodeName} is gone`, ...node };
    if (neverStarted(state, this.o.pods.pods.get(index))) {
      // Reading it would fail with whatever the API server and the client make of a container that
      // has no log yet ("Cannot parse content. No Content-Type defined.").
      const unreadable = `Pod ${state.pod} never started: it has no log`;
      return { logTail: `(${unreadable})`, unreadable, ...node };
    }
    try {
      const { log, summary, rest } = await this.read(index, state.pod, exit);
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
      const warned = { insufficientVUs: countInsufficientVUs(rest), ...node };
      return summary === undefined ? { logTail, ...warned } : { summary, logTail, ...warned };
    } catch (error) {
      const unreadable = `the log of Pod ${state.pod} could not be read: ${apiErrorMessage(error)}`;
      return { logTail: `(${unreadable})`, unreadable, ...node };
    }
  }
}
