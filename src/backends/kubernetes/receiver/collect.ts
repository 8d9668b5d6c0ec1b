import type { V1Pod } from '@kubernetes/client-node';
import { errorMessage } from '../../../errors.ts';
import { decodeIntervalLines, IV_LINES } from '../../../result/interval-lines.ts';
import type { RunnerIntervals } from '../../backend.ts';
import type { FollowedLog, LogFollower } from '../api-client.ts';
import { FOLLOW_QUIET_MS } from '../barrier/follow.ts';
import { CONTAINERS } from '../names.ts';
import type { PodState } from '../pods.ts';
import { FOLLOW_RETRY } from '../runner-log.ts';

/**
 * How long the receiver's log follow may take, in ms: the Pod's grace period (30 s, shared by the
 * runner's k6 and then the receiver) and a margin.
 */
export const RECEIVER_FOLLOW_MS = 45_000;

/** What {@link ReceiverLogs} needs. */
export interface ReceiverLogsOptions {
  /** Follows a container's log of the run (api-client.ts). */
  follow: LogFollower;
  /** The runners' Pod states (pods.ts `RunnerPods`). */
  state(index: number): PodState;
  /** The newest object of runner `index`'s Pod, when known (its containers' states). */
  pod(index: number): V1Pod | undefined;
  /** How far this machine's clock is ahead of the runners' nodes' clock, ms (backend.ts `clockAheadMs`). */
  clockAheadMs(): number | undefined;
}

/**
 * The runners' interval receivers' logs (receiver/main.ts): one follow of each runner Pod's
 * `interval-receiver` container, taken before the Pod is deleted (the receiver prints what it
 * kept when the kubelet ends it, after the runner's k6) or, for a runner that ended by itself,
 * when it is read; so one API request per runner for the whole run.
 */
export class ReceiverLogs {
  private readonly followed = new Map<number, FollowedLog & { complete: Promise<string> }>();
  /**
   * Why a runner's receiver never started, as its status said before its Pod was deleted (a
   * kubelet ending a Pod reports its never-started containers as `ContainerCreating`).
   */
  private readonly never = new Map<number, string>();
  private readonly o: ReceiverLogsOptions;

  constructor(options: ReceiverLogsOptions) {
    this.o = options;
  }

  /**
   * Follows runner `index`'s receiver log in Pod `pod` (once), unless its container never started
   * (its log would be refused). @returns when the follow is taken.
   */
  follow(index: number, pod: string): Promise<void> {
    let log = this.followed.get(index);
    const never = log ? undefined : this.neverStarted(index);
    if (never) this.never.set(index, never);
    else if (!log) {
      // The log is whole once its end line came: a kubelet ends a follow only at its next look at
      // the container (up to 1 s after it exited).
      let sofar = '';
      let complete!: (text: string) => void;
      const followed = this.o.follow(
        { name: pod, container: CONTAINERS.receiver },
        {
          timeoutMs: RECEIVER_FOLLOW_MS,
          quietMs: FOLLOW_QUIET_MS,
          policy: FOLLOW_RETRY,
          onData: (chunk) => {
            sofar += chunk;
            const at = sofar.indexOf(`\n${IV_LINES.end}`);
            if (at >= 0 && sofar.indexOf('\n', at + 1) >= 0) complete(sofar);
          },
        },
      );
      followed.text.catch(() => {});
      log = { ...followed, complete: new Promise<string>((resolve) => (complete = resolve)) };
      this.followed.set(index, log);
    }
    return log ? log.inPlace.catch(() => {}) : Promise.resolve();
  }

  /**
   * Why runner `index`'s receiver container never started (`ImagePullBackOff: …`), from its Pod's
   * container status; undefined when it did, or when its status is not known.
   */
  private neverStarted(index: number): string | undefined {
    const status = this.o.pod(index)?.status?.containerStatuses?.find((c) => c.name === CONTAINERS.receiver);
    const waiting = status?.state?.waiting;
    if (!status || !waiting || status.lastState?.terminated) return undefined;
    return `${waiting.reason ?? 'waiting'}${waiting.message ? `: ${waiting.message}` : ''}`;
  }

  /**
   * Runner `index`'s deltas, their times moved from its node's clock to this machine's, or why
   * there are none (its Pod is gone, its container never started (its image could not be pulled),
   * its log could not be read, the receiver's end line is missing,
   * it refused pushes, or could not listen).
   */
  async read(index: number): Promise<RunnerIntervals> {
    const receiver = `runner ${index}'s interval receiver`;
    let log = this.followed.get(index);
    if (!log) {
      const state = this.o.state(index);
      if (state.kind === 'none') return { missing: `${receiver}: its Pod is gone` };
      const never = this.never.get(index) ?? this.neverStarted(index);
      if (never) return { missing: `${receiver} never started: ${never}` };
      void this.follow(index, state.pod);
      log = this.followed.get(index);
      if (!log) return { missing: `${receiver} never started: ${this.never.get(index) ?? 'waiting'}` };
    }
    let text: string;
    try {
      text = await Promise.race([log.text, log.complete]);
    } catch (error) {
      return { missing: `${receiver}: its log could not be read: ${errorMessage(error)}` };
    }
    try {
      const { deltas, end } = decodeIntervalLines(text);
      const last = text.trim().split('\n').at(-1)?.slice(0, 200) ?? '';
      if (!end) return { missing: `${receiver} printed no end line (its log ends with: "${last}")` };
      if (end.error) return { missing: `${receiver} failed: ${end.error}` };
      if (end.late)
        return {
          missing: `${receiver} started after its runner's test had begun (its first pushes may be lost)`,
        };
      if (end.refused > 0) return { missing: `${receiver} refused ${end.refused} of the runner's pushes` };
      const ahead = this.o.clockAheadMs() ?? 0;
      return { deltas: deltas.map((d) => ({ ...d, fromMs: d.fromMs + ahead, toMs: d.toMs + ahead })) };
    } catch (error) {
      return { missing: `${receiver}: ${errorMessage(error)}` };
    }
  }
}
