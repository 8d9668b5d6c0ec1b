import { errorMessage } from '../../errors.ts';
import { K6_STATUS, type RunnerApi } from '../../k6/rest.ts';
import type { Logger } from '../../log.ts';
import type { Runner, ScheduledStart, StartOptions } from '../backend.ts';
import { type BarrierLog, nodeClocksApart } from './barrier/log.ts';
import { END_POLL_MS, MAILBOX_POLL_MS } from './barrier/script.ts';
import type { BackendClock } from './clock.ts';
import { BARRIER_PORT } from './names.ts';

/**
 * The lead of a scheduled start, in ms: from sending the start time to every runner's barrier
 * container to the instant they start, it covers those requests' way through the API server
 * ({@link START_LEAD_RTT_SHARE} of the slowest of the confirmations just before, which went out all
 * at once the same way), the barrier's mailbox poll ({@link MAILBOX_POLL_MS}) and a margin, within
 * these bounds. A start time that comes late starts its runner at the barrier's next poll (the skew
 * shows it).
 */
export const START_LEAD_MS = { min: 150, margin: 50, max: 5_000 };
/**
 * The share of the slowest confirmation's round trip that the start times' way takes: the
 * confirmations also opened their connections (TLS handshakes), the start times go out on them
 * warm. Measured at 64 runners on the test cluster: 30 to 35% (504 ms against 177 ms, 406 ms
 * against 122 ms).
 */
export const START_LEAD_RTT_SHARE = 0.5;
/**
 * How long before the test can first end ({@link StartOptions.earliestEndS}) the barriers begin
 * to look for its end every {@link END_POLL_MS}, in ms.
 */
export const END_EARLY_MS = 100;
/**
 * How far apart the node clocks of a run's runners may look ({@link nodeClocksApart}) before a
 * warning says so, in ms: well above the delays of the barrier lines (a runner ready last may have
 * one line only; the least delay of the 64 runners' ready lines was 385 ms once on the saturated
 * test cluster), far beyond what NTP lets through.
 */
export const NODE_CLOCKS_WARN_MS = 2_000;
/**
 * How long after the scheduled instant a runner's started line may take before the runner is
 * started through the pod proxy instead, in ms.
 */
export const START_CONFIRM_MS = 10_000;

/** A barrier container's mailbox ({@link BARRIER_PORT}): the start instant and when the test can first end, epoch ms of the nodes' clock. */
export interface Mailbox {
  startAt: number;
  endsFrom?: number;
}

/**
 * The lead of a scheduled start, in ms ({@link START_LEAD_MS}).
 * @param slowestConfirmMs the slowest round trip of the confirmations just before, in ms.
 */
export function startLeadMs(slowestConfirmMs: number): number {
  return Math.min(
    START_LEAD_MS.max,
    Math.max(
      START_LEAD_MS.min,
      START_LEAD_RTT_SHARE * slowestConfirmMs + MAILBOX_POLL_MS + START_LEAD_MS.margin,
    ),
  );
}

/**
 * The mailbox of every runner: the start instant is `nowMs` (this machine's clock) moved to the
 * nodes' clock by `aheadMs` (how far this clock is at most ahead of theirs), plus `leadMs`;
 * `endsFrom` is {@link END_EARLY_MS} before the test can first end (none when `earliestEndS` is 0).
 */
export function mailboxOf(nowMs: number, aheadMs: number, leadMs: number, earliestEndS: number): Mailbox {
  const startAt = Math.round(nowMs - aheadMs + leadMs);
  return {
    startAt,
    ...(earliestEndS > 0 ? { endsFrom: Math.round(startAt + earliestEndS * 1000 - END_EARLY_MS) } : {}),
  };
}

/** What a scheduled start needs of the backend. */
export interface StartDeps {
  clock: BackendClock;
  log: Pick<Logger, 'debug' | 'warning'>;
  /** The slowest round trip of the confirmations just before, in ms (runner-api.ts). */
  slowestConfirmMs: number;
  /** The node of runner `index`'s Pod, when known. */
  nodeOf(index: number): string | undefined;
  /** Puts `mailbox` in runner `index`'s barrier mailbox (`PUT /v1/setup` on {@link BARRIER_PORT} through the pod proxy). */
  setMailbox(index: number, mailbox: Mailbox): Promise<unknown>;
  /** Runner `index`'s k6 REST API through the pod proxy. */
  proxied(index: number): Pick<RunnerApi, 'status' | 'start'>;
  /** Marks runner `index` as started, `startsInMs` from now (runner-api.ts). */
  markStarted(index: number, startsInMs: number): void;
  /** Whether runner `index` has exited. */
  exited(index: number): boolean;
  /** Calls `listener` when a barrier log brings a line that counts; returns what removes it. */
  onBarrierChange(listener: () => void): () => void;
}

/**
 * The scheduled start (Backend.startAll): every runner's barrier container gets one start time of
 * the nodes' clock in its mailbox (`PUT /v1/setup` on {@link BARRIER_PORT} through the pod proxy,
 * all at once) and un-pauses its runner itself at that instant, so the spread of those requests
 * through the API server is not the start skew. The start time is this machine's clock moved to
 * the nodes' by the least delay seen of the barriers' ready and clock lines (a bound from above on
 * how far this clock is ahead, tight once one line came quickly; the nodes' clocks are taken to
 * agree with each other, as NTP keeps them, and a warning says when they look more than
 * {@link NODE_CLOCKS_WARN_MS} apart), plus a lead ({@link startLeadMs}). Each start is confirmed by
 * its `k6d-started` line, whose node times give the offsets. A runner whose start time could not be
 * delivered, or whose line does not come within {@link START_CONFIRM_MS}, is started through the
 * pod proxy at that instant or then.
 * @param logs per runner (in `runners`' order), its barrier log, ready (its `aheadMs` known).
 * @throws Error naming a runner that could not be started at all.
 */
export async function scheduledStart(
  deps: StartDeps,
  runners: readonly Runner[],
  logs: readonly BarrierLog[],
  options: StartOptions,
): Promise<ScheduledStart> {
  const { clock, log } = deps;
  const clocks = nodeClocksApart(logs.map((l) => l.aheadMs!));
  const aheadMs = logs[clocks.ahead]!.aheadMs!;
  if (clocks.gapMs > NODE_CLOCKS_WARN_MS) {
    const node = (i: number) => deps.nodeOf(runners[i]!.index) ?? '(unknown)';
    log.warning(
      `the runners' node clocks look at least ${Math.round(clocks.gapMs)} ms apart (node ${node(clocks.behind)} of runner ${runners[clocks.behind]!.index} behind node ${node(clocks.ahead)} of runner ${runners[clocks.ahead]!.index}, by their barrier logs): every runner starts at one instant of its own node's clock, so they may start that far apart, and the start skew is measured by those clocks; keep the nodes' clocks synchronised (NTP)`,
    );
  }
  const rttMs = deps.slowestConfirmMs;
  const sentAtMs = clock.now();
  // One instant given for several backends (load zones), else this backend's own lead from now.
  const leadMs = options.atMs === undefined ? startLeadMs(rttMs) : options.atMs - sentAtMs;
  // From shortly before the test can first end, the barriers look for its end more often.
  const mailbox = mailboxOf(sentAtMs, aheadMs, leadMs, options.earliestEndS);
  const { startAt } = mailbox;
  log.debug(
    `starting ${runners.length} runners at ${new Date(startAt).toISOString()} of their clocks (in ${leadMs.toFixed(0)} ms; this clock is at most ${Math.round(aheadMs)} ms ahead; slowest confirmation ${Math.round(rttMs)} ms)`,
  );
  const starts = await Promise.all(runners.map((r, i) => startOne(deps, r, logs[i]!, mailbox, aheadMs)));
  const range = (values: number[]) =>
    values.length > 0
      ? `${Math.round(Math.min(...values))} to ${Math.round(Math.max(...values))} ms`
      : 'none';
  const set = starts.flatMap((s) => (s.setBeforeMs === undefined ? [] : [s.setBeforeMs]));
  log.debug(
    `start times set ${range(set)} before the instant; runners un-paused ${range(starts.map((s) => s.sentAtMs - startAt))} after it, k6 confirmed ${range(starts.map((s) => s.atMs - s.sentAtMs))} after that`,
  );
  const first = Math.min(...starts.map((s) => s.sentAtMs));
  const confirmed = starts.map((s) => s.atMs);
  return {
    startedAtMs: Math.min(clock.now(), Math.max(sentAtMs, startAt + aheadMs)),
    offsetsMs: starts.map((s) => s.sentAtMs - first),
    confirmedSpreadMs: Math.max(...confirmed) - Math.min(...confirmed),
    firstAtMs: first + aheadMs,
  };
}

/**
 * Starts one runner at `mailbox.startAt` (epoch ms of the nodes' clock) through its barrier
 * container's mailbox, or through the pod proxy when that fails ({@link scheduledStart}).
 * @returns when it was un-paused and when k6 confirmed it, in epoch ms of the nodes' clock (both
 *   the confirmation for a runner started through the pod proxy: its request's way is unknown),
 *   and how long before the instant its start time was set, in ms (undefined when it was not).
 */
async function startOne(
  deps: StartDeps,
  runner: Runner,
  log: BarrierLog,
  mailbox: Mailbox,
  aheadMs: number,
): Promise<{ sentAtMs: number; atMs: number; setBeforeMs?: number }> {
  const { clock } = deps;
  const { startAt } = mailbox;
  const { index } = runner;
  // In whole ms, as the nodes' lines give their times.
  const nodeNow = () => Math.round(clock.now() - aheadMs);
  deps.markStarted(index, Math.max(0, startAt - nodeNow()));
  const setBeforeMs = await deps.setMailbox(index, mailbox).then(
    () => startAt - nodeNow(),
    (error: unknown) => {
      deps.log.debug(`runner ${index}: its start time could not be set: ${errorMessage(error)}`);
      return undefined;
    },
  );
  const delivered = setBeforeMs !== undefined;
  // Until `done`, or `untilNodeMs` of the nodes' clock.
  const wait = (untilNodeMs: number, done: () => boolean) =>
    new Promise<void>((resolve) => {
      let cancel = () => {};
      const arm = () => {
        cancel = clock.timer(Math.max(0, untilNodeMs - nodeNow()), check);
      };
      const check = () => {
        if (!done() && nodeNow() < untilNodeMs) {
          cancel();
          arm();
          return;
        }
        cancel();
        off();
        resolve();
      };
      const off = deps.onBarrierChange(check);
      void runner.exited.then(check);
      check();
    });
  if (delivered)
    await wait(startAt + START_CONFIRM_MS, () => log.started !== undefined || deps.exited(index));
  else await wait(startAt, () => deps.exited(index));
  if (log.started) return { ...log.started, ...(delivered ? { setBeforeMs } : {}) };
  deps.log.debug(
    `runner ${index}: ${delivered ? 'no started line' : 'no start time'}; started through the pod proxy`,
  );
  const proxied = deps.proxied(index);
  const status = await proxied.status();
  if (status.status < K6_STATUS.Running) await proxied.start();
  const atMs = nodeNow();
  return { sentAtMs: atMs, atMs, ...(delivered ? { setBeforeMs } : {}) };
}
