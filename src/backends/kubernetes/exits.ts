import type { V1Pod } from '@kubernetes/client-node';
import { runnerCompleted } from '../../k6/exit-codes.ts';
import type { Logger } from '../../log.ts';
import type { RunnerExit } from '../../plan.ts';
import { type BackendClock, every } from './clock.ts';
import type { PodState } from './pods.ts';

/**
 * How long after a taken-away Pod's grace period its node may stay silent before the runner is
 * taken for lost, in ms.
 */
export const LOST_AFTER_MS = 10_000;

/** How often a runner's timeouts are looked at again when no Pod event comes, in ms. */
export const CHECK_EVERY_MS = 1_000;

/** What the exit rules need to know of the run. */
export interface ExitRules {
  /** How long a runner Pod may stay Unschedulable before the run fails, in s. */
  scheduleTimeoutS: number;
  /** The k6 container's memory limit (`resources.limits.memory`), named when a runner is OOMKilled. */
  memoryLimit?: string;
}

/** The runner Pods as the exits see them (pods.ts `RunnerPods`). */
export interface PodSource {
  state(index: number): PodState;
  /** The newest Pod object per runner index. */
  readonly pods: ReadonlyMap<number, V1Pod>;
  /** Calls `listener` after every change; returns what removes it. */
  onChange(listener: () => void): () => void;
}

/**
 * How runner `index` ended, from its Pod's state, or undefined while it has not:
 * - its container ended: its exit code, with the Pod's disruption (`was evicted on node n1: …`),
 *   or the kubelet's reason as `signal` (`OOMKilled` names the memory limit);
 * - its Pod will never run (an image pull error, a bad config, deleted: pods.ts `classifyPod`):
 *   no code, `Pod P: <reason>`;
 * - its Pod is Unschedulable for {@link ExitRules.scheduleTimeoutS} s or more (from
 *   `unschedulableSince.at`, epoch ms, which this sets when it first sees it and clears when it no
 *   longer is): no code, `Pod P could not be placed within N s: <the scheduler's message>`.
 * @param nowMs this machine's clock, epoch ms.
 */
export function exitOf(
  index: number,
  state: PodState,
  unschedulableSince: { at: number },
  nowMs: number,
  rules: ExitRules,
): RunnerExit | undefined {
  if (state.kind === 'ended') {
    if (state.disruption) {
      const { what, message } = state.disruption;
      return {
        code: state.code,
        reason: `runner ${index} was ${what} on node ${state.node ?? '(unknown)'}${message ? `: ${message}` : ''}`,
      };
    }
    if (state.reason === 'OOMKilled') {
      const limit = rules.memoryLimit;
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
    unschedulableSince.at ||= nowMs;
    if (nowMs - unschedulableSince.at >= rules.scheduleTimeoutS * 1000) {
      return {
        code: null,
        reason: `Pod ${state.pod} could not be placed within ${rules.scheduleTimeoutS} s: ${state.unschedulable}`,
      };
    }
  } else {
    unschedulableSince.at = 0;
  }
  return undefined;
}

/**
 * A runner whose Pod was taken away (deleted, evicted, its node tainted NotReady or unreachable)
 * but whose node never reports its container's end: once the Pod's grace period
 * (`deletionTimestamp`) is over by {@link LOST_AFTER_MS}, the node is taken for gone (its kubelet
 * stopped: the node is NotReady) and the runner for lost, with whatever it measured.
 * @param pod the runner's newest Pod object.
 * @param disruptedAtMs when this machine first saw the disruption of the running Pod (epoch ms; 0: not).
 * @param nowMs this machine's clock, epoch ms.
 * @returns the lost runner's exit (no code), or undefined.
 */
export function lostOf(
  index: number,
  state: PodState,
  pod: V1Pod | undefined,
  disruptedAtMs: number,
  nowMs: number,
): RunnerExit | undefined {
  if (state.kind !== 'running' || !state.disruption || !disruptedAtMs) return undefined;
  // Deleted: the end of its grace period; else (a kubelet's own eviction) the Pod's grace period from now.
  const deleted = pod?.metadata?.deletionTimestamp;
  const deadline = deleted
    ? new Date(deleted).getTime()
    : disruptedAtMs + (pod?.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
  if (nowMs < Math.max(deadline, disruptedAtMs) + LOST_AFTER_MS) return undefined;
  const { what, by } = state.disruption;
  return {
    code: null,
    reason:
      `runner ${index} was lost on node ${state.node ?? '(unknown)'}: its Pod was ${what}${by ? ` (${by})` : ''} ` +
      `but the node never reported the end of its container; the node is NotReady or unreachable (kubelet stopped)`,
  };
}

/** What a runner's exit watch tells its backend on the way. */
export interface ExitHooks {
  /** Called with the runner's state at each check (each Pod change, and every {@link CHECK_EVERY_MS}). */
  onState(state: PodState): void;
  /** Called once the runner is taken for lost ({@link lostOf}): its k6 may still run on the silent node. */
  onLost(): void;
}

/**
 * The runners' exits, as their Pod watch and the time tell them: owns which runners ended, how,
 * and which were lost with their node.
 */
export class RunnerExits {
  private readonly exits = new Map<number, RunnerExit>();
  private readonly lostRunners = new Set<number>();
  private readonly pods: PodSource;
  private readonly rules: ExitRules;
  private readonly clock: BackendClock;
  private readonly log: Pick<Logger, 'warning'> | undefined;
  /** The scheduler's messages already told (`PodScheduled` False, reason Unschedulable). */
  private readonly unschedulableTold = new Set<string>();

  /** @param log where the scheduler's reasons for an unschedulable runner are told as they come. */
  constructor(pods: PodSource, rules: ExitRules, clock: BackendClock, log?: Pick<Logger, 'warning'>) {
    this.pods = pods;
    this.rules = rules;
    this.clock = clock;
    this.log = log;
  }

  /**
   * Tells the scheduler's reason for runner `index`'s Unschedulable Pod (its `PodScheduled`
   * condition: status False, reason Unschedulable, the message) as soon as it is seen, once per
   * distinct message over the run's runners, rather than only when the schedule timeout fails it.
   */
  private tellUnschedulable(index: number, state: PodState): void {
    if (state.kind !== 'pending' || !state.unschedulable || this.unschedulableTold.has(state.unschedulable))
      return;
    this.unschedulableTold.add(state.unschedulable);
    this.log?.warning(
      `runner ${index} cannot be placed yet (Pod ${state.pod} is Unschedulable): ${state.unschedulable} ` +
        `The run fails if it stays so for ${this.rules.scheduleTimeoutS} s (schedule timeout).`,
    );
  }

  /** Runner `index`'s exit, once it is known. */
  get(index: number): RunnerExit | undefined {
    return this.exits.get(index);
  }

  /** Whether runner `index`'s exit is known. */
  has(index: number): boolean {
    return this.exits.has(index);
  }

  /** Whether runner `index` was lost with its node: its log cannot be read. */
  isLost(index: number): boolean {
    return this.lostRunners.has(index);
  }

  /** Whether all `count` runners ended on their own with a completed exit code (k6/exit-codes.ts). */
  allCompleted(count: number): boolean {
    return this.exits.size === count && [...this.exits.values()].every((e) => runnerCompleted(e.code));
  }

  /**
   * Watches runner `index` until it exits ({@link exitOf}) or is lost ({@link lostOf}), at each Pod
   * change and every {@link CHECK_EVERY_MS} (timeouts pass without Pod events too).
   * @returns its exit; never rejects.
   */
  watch(index: number, hooks: ExitHooks): Promise<RunnerExit> {
    return new Promise<RunnerExit>((resolve) => {
      const unschedulableSince = { at: 0 };
      const lostSince = { at: 0 };
      const check = () => {
        const state = this.pods.state(index);
        hooks.onState(state);
        this.tellUnschedulable(index, state);
        if (state.kind === 'running' && state.disruption) lostSince.at ||= this.clock.now();
        const lost = lostOf(index, state, this.pods.pods.get(index), lostSince.at, this.clock.now());
        if (lost) {
          this.lostRunners.add(index);
          hooks.onLost();
        }
        const exit = exitOf(index, state, unschedulableSince, this.clock.now(), this.rules) ?? lost;
        if (exit) {
          this.exits.set(index, exit);
          off();
          stop();
          resolve(exit);
        }
      };
      const off = this.pods.onChange(check);
      const stop = every(this.clock, CHECK_EVERY_MS, check);
      check();
    });
  }
}
