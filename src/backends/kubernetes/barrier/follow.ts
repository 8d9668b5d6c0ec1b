import type { Clock } from '../../../clock.ts';
import type { Logger } from '../../../log.ts';
import type { LogFollower } from '../api-client.ts';
import { apiErrorMessage } from '../api-errors.ts';
import { CONTAINERS } from '../names.ts';
import type { PodState } from '../pods.ts';
import { BarrierLog } from './log.ts';

/**
 * A follow out this long without an error answer is taken, in ms: the API server and the kubelet
 * answer a refusal at once, and send no headers for a log that is still empty (k6 runs `--quiet`),
 * so silence is how a follow in place looks. The follow reads the log from its start, so it only
 * has to reach the kubelet before the container is removed, which takes longer than k6's exit.
 */
export const FOLLOW_QUIET_MS = 300;

/**
 * Opening a barrier container's follow: the kubelet may be busy (503s) while many Pods start at
 * once. A follow still refused after these (about 7 s) gives way to polling through the pod proxy.
 */
export const BARRIER_FOLLOW_RETRY = { retries: 4, maxRetryTimeMs: 10_000, minTimeoutMs: 200 };

/** How many times a barrier container's follow that broke is opened again before the runner is polled through the pod proxy instead. */
export const BARRIER_FOLLOW_ATTEMPTS = 5;

/**
 * A runner's follow of its barrier container's log (barrier/log.ts), from when the container runs
 * to the end of the runner's test.
 */
export interface BarrierFollow {
  log: BarrierLog;
  /** The follow could not be kept: the runner is polled through the pod proxy instead. */
  failed: boolean;
}

/** What {@link BarrierFollows} needs. */
export interface BarrierFollowsOptions {
  /** Follows a container's log of the run (api-client.ts). */
  follow: LogFollower;
  /** The runners' Pod states (pods.ts `RunnerPods.state`). */
  state(index: number): PodState;
  log: Pick<Logger, 'debug'>;
  clock: Pick<Clock, 'now'>;
  /** Aborted at cleanup: a follow that ends then is not opened again. */
  signal: AbortSignal;
  /** The longest a follow may take, in ms (the whole run). */
  timeoutMs: number;
}

/**
 * The runners' barrier containers' followed logs: owns one {@link BarrierFollow} per runner whose
 * barrier container runs, and the listeners told when a log brings its ready, started or end line.
 */
export class BarrierFollows {
  private readonly follows = new Map<number, BarrierFollow>();
  private readonly listeners = new Set<() => void>();
  private readonly o: BarrierFollowsOptions;

  constructor(options: BarrierFollowsOptions) {
    this.o = options;
  }

  /** Runner `index`'s follow, once its barrier container ran. */
  get(index: number): BarrierFollow | undefined {
    return this.follows.get(index);
  }

  /** Calls `listener` when a runner's barrier log brings its ready, started or end line; returns what removes it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Follows runner `index`'s barrier container log (Pod `pod`) into a {@link BarrierLog}, once (a
   * runner already followed is left as it is), calling `onEnd` with the end status once the end line
   * arrives. A follow that was taken and breaks (or ends) before the end line is opened again, from
   * the log's start, while the container runs, {@link BARRIER_FOLLOW_ATTEMPTS} times in all. A
   * follow refused after its retries ({@link BARRIER_FOLLOW_RETRY}), or broken too often, is
   * `failed`: the runner is polled through the pod proxy from then on.
   */
  follow(index: number, pod: string, onEnd: (status: number) => void): void {
    if (this.follows.has(index)) return;
    const { log, clock, signal } = this.o;
    let ready = false;
    const follow: BarrierFollow = {
      log: new BarrierLog(() => {
        if (!ready && follow.log.readyAtMs !== undefined && !follow.log.end) {
          ready = true;
          log.debug(`runner ${index}: ready`);
        }
        if (follow.log.end) {
          const { atMs, status } = follow.log.end;
          log.debug(
            `runner ${index}: its test ended (status ${status}), seen ${Math.round(clock.now() - atMs)} ms later`,
          );
          onEnd(status);
        }
        for (const listener of this.listeners) listener();
      }, clock),
      failed: false,
    };
    const open = (attempt: number) => {
      follow.log.reset();
      const followed = this.o.follow(
        { name: pod, container: CONTAINERS.barrier },
        {
          timeoutMs: this.o.timeoutMs,
          quietMs: FOLLOW_QUIET_MS,
          policy: BARRIER_FOLLOW_RETRY,
          onData: (chunk) => follow.log.feed(chunk),
        },
      );
      let taken = false;
      followed.inPlace.then(
        () => {
          taken = true;
          log.debug(`runner ${index}: following its barrier log (attempt ${attempt})`);
        },
        () => {},
      );
      // The stream ends when the container does; before the end line, it broke or was refused.
      const settled = () => {
        if (signal.aborted || follow.log.end) return;
        const state = this.o.state(index);
        const runs = state.kind === 'running' && state.pod === pod && state.barrier === 'running';
        if (taken && runs && attempt < BARRIER_FOLLOW_ATTEMPTS) open(attempt + 1);
        else follow.failed = true;
      };
      followed.text.then(settled, (error: unknown) => {
        log.debug(`runner ${index}: its barrier log follow ended: ${apiErrorMessage(error)}`);
        settled();
      });
    };
    this.follows.set(index, follow);
    open(1);
  }

  /**
   * Runner `index`'s barrier: `ready` once its barrier container printed that k6 is at status 4,
   * `failed` when that container failed or its log cannot be followed (the runner is then polled
   * through the pod proxy), else `waiting`.
   */
  gate(index: number): 'waiting' | 'ready' | 'failed' {
    const state = this.o.state(index);
    const follow = this.follows.get(index);
    if (state.kind !== 'running') return 'waiting';
    if (follow?.log.readyAtMs !== undefined || state.barrier === 'exited') return 'ready';
    if (state.barrier === 'failed' || follow?.failed) return 'failed';
    return 'waiting';
  }

  /** Whether every one of `count` runners' Pod runs and its barrier is done (ready or failed). */
  allDone(count: number): boolean {
    for (let i = 0; i < count; i++) if (this.gate(i) === 'waiting') return false;
    return true;
  }
}
