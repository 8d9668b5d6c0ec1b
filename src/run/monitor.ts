import type { Runner, RunnerExit } from '../backends/backend.ts';
import type { Failure } from '../errors.ts';
import { isStopExit, K6_EXIT, runnerCompleted } from '../k6/exit-codes.ts';
import type { Logger } from '../log.ts';
import type { MetricContains } from '../result/result.ts';
import type { Clock } from './clock.ts';
import { runnerFailureLine } from './collect.ts';
import type { LaunchedRunners } from './launch.ts';
import { Progress } from './progress.ts';
import { Stopper } from './stop.ts';

/** What k6 logs when a threshold with `abortOnFail` aborts a runner's test (k6 v2.2.0 `cmd/run.go`). */
const ABORT_ON_FAIL_LOG = 'at least one has abortOnFail enabled';
/** How often the monitor looks at the clock when nothing happens, in ms. */
const TICK_MS = 1000;

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
  /** Aborting it (Ctrl-C, a cancelled workflow) stops every runner. */
  signal?: AbortSignal;
  clock: Clock;
  log: Logger;
}

/** What the monitor saw. */
export interface MonitorInfo {
  /** Why the run failed while it ran (kinds `interrupted`, `runner`, `aborted`, `deadline`), in order. */
  failures: Failure[];
  /** Epoch ms at which the last runner ended. */
  endedAtMs: number;
  /** What each live metric contains (`time`, `data`, `default`), by name. */
  contains: Record<string, MetricContains>;
}

/** What wakes the monitor: a runner ended, the interruption, or a tick of the clock. */
type MonitorEvent = 'exit' | 'abort' | 'tick';

/**
 * Monitor stage: from the start until every runner has ended, reacts to events. An interruption
 * stops every runner (`interrupted`). A runner that ends without completing its segment, unless it
 * was stopped, fails the run (`runner`) and stops the others; one whose slice crossed an
 * `abortOnFail` threshold aborts the test for all (`aborted`). Past totalDuration plus the grace,
 * every runner is stopped (`deadline`); runners still there `stopTimeoutS` after a stop are
 * killed. A progress line is logged every `progressIntervalS`.
 */
export async function monitor(
  { runners, exits }: LaunchedRunners,
  startedAtMs: number,
  options: MonitorOptions,
): Promise<MonitorInfo> {
  const { clock, log } = options;
  const running = new Set(runners.map((r) => r.index));
  const failures: Failure[] = [];
  const stopper = new Stopper(runners, options.stopTimeoutS, clock, log);
  const progress = new Progress(runners, startedAtMs, options.progressIntervalS, clock, log);
  const deadlineMs = startedAtMs + (options.totalDurationS + options.graceS) * 1000;
  const interrupted = abortEvent(options.signal);
  const fail = (failure: Failure) => {
    failures.push(failure);
    stopper.stopAll(failure.kind === 'interrupted' ? 'interrupted' : failure.message, running);
  };

  while (running.size > 0) {
    // Once the runners are stopping, the interruption has nothing left to do.
    const event = await nextEvent(runners, running, stopper.stopping ? undefined : interrupted, clock);
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
      const failure = await judgeExit(runners[i]!, exit, {
        othersRunning: running.size > 0,
        stopping: stopper.stopping,
      });
      if (failure) fail(failure);
    }
    if (!stopper.stopping && clock.now() > deadlineMs) {
      fail({
        kind: 'deadline',
        message: `deadline exceeded: still running ${options.graceS} s after the test's totalDuration of ${options.totalDurationS} s`,
      });
    }
    await stopper.killOverdue(running);
    await progress.maybeReport(running);
  }
  return { failures, endedAtMs: clock.now(), contains: progress.contains };
}

/**
 * What a runner's exit means for the run: a `runner` failure when it did not complete its segment
 * (unless the run was stopping and it exited as stopped runners do), an `aborted` failure when its
 * slice crossed an `abortOnFail` threshold while others still run, else nothing.
 */
async function judgeExit(
  runner: Runner,
  exit: RunnerExit,
  run: { othersRunning: boolean; stopping: boolean },
): Promise<Failure | undefined> {
  if (!runnerCompleted(exit.code) && !(run.stopping && isStopExit(exit.code))) {
    return { kind: 'runner', runner: runner.index, message: await runnerFailureLine(runner, exit) };
  }
  if (exit.code === K6_EXIT.thresholdsHaveFailed && run.othersRunning && !run.stopping) {
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

/** The next event: the first running runner to end, the interruption (when given), or a tick. */
function nextEvent(
  runners: readonly Runner[],
  running: ReadonlySet<number>,
  interrupted: Promise<'abort'> | undefined,
  clock: Clock,
): Promise<MonitorEvent> {
  return Promise.race<MonitorEvent>([
    ...[...running].map((i) => runners[i]!.exited.then((): MonitorEvent => 'exit')),
    clock.sleep(TICK_MS).then((): MonitorEvent => 'tick'),
    ...(interrupted ? [interrupted] : []),
  ]);
}
