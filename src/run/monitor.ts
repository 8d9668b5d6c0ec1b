import type { Runner } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import type { Failure } from '../errors.ts';
import { isStopExit, K6_EXIT, runnerCompleted } from '../k6/exit-codes.ts';
import { K6_STATUS } from '../k6/rest.ts';
import type { Threshold } from '../k6/thresholds-parser.ts';
import type { Logger } from '../log.ts';
import type { RunnerExit } from '../plan.ts';
import type { MetricContains } from '../result/schema.ts';
import { GlobalAbort } from './abort.ts';
import { runnerFailureLine } from './collect.ts';
import type { LaunchedRunners } from './launch.ts';
import { type PollRound, Progress } from './progress.ts';
import { mergeVusRecords, RunnerStatuses, type VusSample } from './status-poll.ts';
import { Stopper } from './stop.ts';

/** What k6 logs when a threshold with `abortOnFail` aborts a runner's test (k6 v2.2.0 `cmd/run.go`). */
const ABORT_ON_FAIL_LOG = 'at least one has abortOnFail enabled';

/** Options of {@link monitor}. */
export interface MonitorOptions {
  /** The test's totalDuration from `k6 inspect`, in s. */
  totalDurationS: number;
  /** Time allowed beyond totalDuration (setup, teardown, summary), in s. */
  graceS: number;
  /** How long stopped runners may take to exit before they are killed, in s. */
  stopTimeoutS: number;
  /** Seconds between progress lines. */
  progressIntervalS: number;
  /** Seconds between points of the timeline kept in the result. Default 5. */
  timelineIntervalS?: number;
  /** Called with every poll round of the runners' REST APIs (see {@link Progress}). */
  onPoll?: (round: PollRound) => void;
  /** Aborting it (Ctrl-C, a cancelled workflow) stops every runner. */
  signal?: AbortSignal;
  /**
   * Called once, when every runner's test has ended and before their linger is ended (teardown.ts),
   * with the indexes of the runners still there (lingering). It may end the linger of those it does
   * not need at once with `endLinger(i)` (Runner.terminate, once per runner), so that their ends
   * overlap its own work; the others' linger ends when it returns. A failure it returns joins the run's.
   */
  onTestEnded?(
    lingering: ReadonlySet<number>,
    endLinger: (index: number) => void,
  ): Promise<Failure | undefined>;
  /** The script's thresholds: those with abortOnFail are judged live on the whole test (abort.ts). */
  thresholds?: readonly Threshold[];
  clock: Clock;
  log: Logger;
}

/** What the monitor saw. */
export interface MonitorInfo {
  /** Why the run failed while it ran (kinds `interrupted`, `runner`, `aborted`, `deadline`), in order. */
  failures: Failure[];
  /** Epoch ms at which the last runner's test ended (before teardown and the end of the linger). */
  endedAtMs: number;
  /** What each live metric contains (`time`, `data`, `default`), by name. */
  contains: Record<string, MetricContains>;
  /**
   * The whole test's `vus` gauge, sampled twice a second while the test ran: from the runners' own
   * records when every runner keeps one (Kubernetes), else from the status poll (status-poll.ts).
   */
  vusSamples: VusSample[];
  /** The polls: its `finish` takes the runners' summaries, logs the last line and returns the timeline. */
  progress: Progress;
}

/** What wakes the monitor: a runner ended, the interruption, or a tick of the clock. */
type MonitorEvent = 'exit' | 'abort' | 'tick';

/**
 * Monitor stage: from the start until every runner has exited, reacts to events. Runners linger
 * once their test has ended (`--linger`); the monitor sees that on `GET /v1/status`
 * (status-poll.ts) and, once every runner's test has ended, calls `onTestEnded` (the teardown) and
 * then ends every runner's linger. An interruption stops every runner (`interrupted`). A runner that
 * ends without completing its segment, unless it was stopped, fails the run (`runner`) and stops the
 * others; so does a runner whose test was interrupted on its own (`test.abort()`; its exit code,
 * once its linger ended, says why). One whose slice crossed an `abortOnFail` threshold aborts
 * the test for all (`aborted`); `exec.test.fail()` (exit 110) lets the others run on, and the run
 * fails at the end (`marked-failed`). Past totalDuration plus the grace, every runner is stopped
 * (`deadline`); runners still there `stopTimeoutS` after a stop or the end of their linger are
 * killed. Meanwhile the runners are polled without blocking (see {@link Progress}): a progress line
 * every `progressIntervalS`, the timeline, and `onPoll` for whoever reads the live metrics.
 */
export async function monitor(
  { runners, exits }: LaunchedRunners,
  startedAtMs: number,
  options: MonitorOptions,
): Promise<MonitorInfo> {
  const { clock, log } = options;
  /** Runners that have not exited. */
  const running = new Set(runners.map((r) => r.index));
  const failures: Failure[] = [];
  const stopper = new Stopper(runners, options.stopTimeoutS, clock, log);
  const progress = new Progress(runners, {
    startedAtMs,
    progressIntervalS: options.progressIntervalS,
    ...(options.timelineIntervalS ? { timelineIntervalS: options.timelineIntervalS } : {}),
    ...(options.onPoll ? { onPoll: options.onPoll } : {}),
    clock,
    log,
  });
  const statuses = new RunnerStatuses(runners, clock);
  const wakeup = new Wakeup(runners);
  const globalAbort = new GlobalAbort(options.thresholds ?? [], runners, startedAtMs, clock);
  const deadlineMs = startedAtMs + (options.totalDurationS + options.graceS) * 1000;
  const interrupted = abortEvent(options.signal);
  /** Runners still running their test: not exited, and not seen ended. */
  const testing = () => [...running].filter((i) => !statuses.ended.has(i));
  const fail = (failure: Failure) => {
    failures.push(failure);
    stopper.stopAll(failure.kind === 'interrupted' ? 'interrupted' : failure.message, testing());
  };
  let testEndedAtMs: number | undefined;
  let markedFailed: number | undefined;
  /** The runner whose test was interrupted on its own first (test.abort(), its slice's abortOnFail). */
  let interruptedFirst: number | undefined;

  while (running.size > 0) {
    // Polls run beside the loop: a runner whose REST API hangs never delays an exit or the deadline.
    // Lingering runners (test ended) are still polled, so lines keep their interval, but count as ended.
    progress.tick(running, new Set(testing()));
    // Once the runners are stopping, the interruption has nothing left to do.
    const event = await nextEvent(
      wakeup,
      stopper.stopping ? undefined : interrupted,
      clock,
      statuses.intervalMs,
    );
    // The interruption first: runners that a terminal's Ctrl-C reached too exit 105, which is not their failure.
    if (event === 'abort') {
      fail({
        kind: 'interrupted',
        message: 'interrupted: the run was cancelled and every runner was stopped',
      });
    }
    for (const i of [...running]) {
      const exit = exits[i];
      if (!exit) continue;
      running.delete(i);
      if (exit.code === K6_EXIT.markedAsFailed) markedFailed ??= i;
      const failure = await judgeExit(runners[i]!, exit, {
        abortedTheTest: i === interruptedFirst || (testing().length > 0 && !stopper.stopping),
        stopping: stopper.stopping,
      });
      if (failure) fail(failure);
    }
    if (testEndedAtMs === undefined) {
      for (const i of await statuses.poll(running)) {
        // Interrupted on its own (test.abort(), its slice's abortOnFail): that ends the whole test,
        // as in one k6 process. It lingers like the others, so teardown() can still run on it; its
        // exit code says why once its linger ends.
        if (
          statuses.endStatus.get(i) === K6_STATUS.Interrupted &&
          !stopper.stopping &&
          testing().length > 0
        ) {
          interruptedFirst = i;
          stopper.stopAll(
            `runner ${i}'s test was interrupted (test.abort() or an abortOnFail threshold)`,
            testing(),
          );
        }
      }
      if (testing().length === 0) {
        testEndedAtMs = clock.now();
        progress.close();
        const lingering = new Set(running);
        const failure = await options.onTestEnded?.(lingering, (i) => {
          if (lingering.has(i)) stopper.terminate(i);
        });
        if (failure) failures.push(failure);
        for (const i of lingering) stopper.terminate(i);
      } else if (!stopper.stopping && clock.now() > deadlineMs) {
        const late = testing();
        fail({
          kind: 'deadline',
          message: `deadline exceeded: still running ${options.graceS} s after the test's totalDuration of ${options.totalDurationS} s (still testing: runner ${late.join(', ')})`,
          runners: late,
        });
      }
    }
    await stopper.killOverdue(running, statuses.ended);
    // An abortOnFail threshold is judged on the whole test, never on one runner's slice.
    const aborted =
      stopper.stopping || testEndedAtMs !== undefined ? undefined : await globalAbort.check(running);
    if (aborted) fail(aborted);
  }
  if (markedFailed !== undefined) {
    failures.push({
      kind: 'marked-failed',
      runner: markedFailed,
      message: `the test was marked as failed: the script called exec.test.fail() (runner ${markedFailed})`,
    });
  }
  const endedAtMs = testEndedAtMs ?? clock.now();
  progress.tick(new Set());
  await progress.settled();
  // The runners' own records where every one has it (Kubernetes), else the status poll's samples.
  const recorded = runners.every((r) => r.vusRecord)
    ? mergeVusRecords(runners.map((r) => r.vusRecord!()))
    : [];
  const vusSamples = recorded.length > 0 ? recorded : statuses.vusSamples;
  return { failures, endedAtMs, contains: progress.contains, vusSamples, progress };
}

/**
 * What a runner's exit means for the run: a `runner` failure when it did not complete its segment
 * (unless the run was stopping and it exited as stopped runners do), an `aborted` failure when its
 * slice crossed an `abortOnFail` threshold and that ended the test for all, else nothing.
 */
async function judgeExit(
  runner: Runner,
  exit: RunnerExit,
  run: { abortedTheTest: boolean; stopping: boolean },
): Promise<Failure | undefined> {
  if (!runnerCompleted(exit.code) && !(run.stopping && isStopExit(exit.code))) {
    return { kind: 'runner', runner: runner.index, message: await runnerFailureLine(runner, exit) };
  }
  if (exit.code === K6_EXIT.thresholdsHaveFailed && run.abortedTheTest) {
    const { logTail } = await runner.collect();
    if (logTail.includes(ABORT_ON_FAIL_LOG)) {
      const why = `runner ${runner.index} crossed a threshold with abortOnFail on its slice`;
      return { kind: 'aborted', runner: runner.index, message: `test aborted: ${why}` };
    }
  }
  return undefined;
}

function abortEvent(signal: AbortSignal | undefined): Promise<'abort'> | undefined {
  if (!signal) return undefined;
  return new Promise((resolve) => {
    if (signal.aborted) resolve('abort');
    else signal.addEventListener('abort', () => resolve('abort'), { once: true });
  });
}

/**
 * What wakes the monitor's loop besides its tick: a runner that exits, or a runner whose backend
 * saw its test end ({@link Runner.testEnded}). Each runner's promises get one reaction for the
 * whole run: racing them at every tick would add one per runner per tick, hundreds of thousands
 * over an hour of 100 runners, each kept until its runner ends. A wake that comes while the loop
 * is busy is kept for its next wait.
 */
class Wakeup {
  private pending = false;
  private waiting: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(runners: readonly Runner[]) {
    for (const runner of runners) {
      void runner.exited.then(() => this.wake());
      void runner.testEnded?.then(() => this.wake());
    }
  }

  /** Settles at the next wake, or at once when one came since the last wait settled. */
  next(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    if (!this.waiting) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.waiting = { promise, resolve };
    }
    return this.waiting.promise;
  }

  private wake(): void {
    if (!this.waiting) {
      this.pending = true;
      return;
    }
    this.waiting.resolve();
    this.waiting = undefined;
  }
}

/** The next event: a wake ({@link Wakeup}), the interruption (when given), or a tick of `tickMs` (the status poll's interval). */
function nextEvent(
  wakeup: Wakeup,
  interrupted: Promise<'abort'> | undefined,
  clock: Clock,
  tickMs: number,
): Promise<MonitorEvent> {
  // The tick's timer goes with the race: the last one would hold the process up to `tickMs` after
  // the result (0.5 s at the end of every run).
  const done = new AbortController();
  return Promise.race<MonitorEvent>([
    wakeup.next().then((): MonitorEvent => 'exit'),
    clock.sleep(tickMs, done.signal).then((): MonitorEvent => 'tick'),
    ...(interrupted ? [interrupted] : []),
  ]).finally(() => done.abort());
}
