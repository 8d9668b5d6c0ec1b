import type { Runner } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import { isRestTimeout } from '../k6/rest.ts';
import type { Logger } from '../log.ts';

/**
 * Stop stage: stops every runner still running once (`PATCH /v1/status` `stopped: true`). A runner
 * that does not answer in time is killed; one whose REST API refuses the stop, often one that is
 * already ending, is asked to end by {@link Runner.terminate} and never killed at once, so that its
 * summary is kept. It also ends the linger of runners whose test has ended (`Runner.terminate`,
 * SIGTERM), and kills the runners that have not done what they were told `stopTimeoutS` after it (a
 * stopped runner whose test has not ended, a terminated one still there).
 */
export class Stopper {
  /** Epoch ms of the stop; `undefined` until {@link stopAll} was called. */
  private stoppedAtMs: number | undefined;
  /** Epoch ms at which each runner was told to end its linger, by index. */
  private readonly terminatedAtMs = new Map<number, number>();
  private readonly runners: readonly Runner[];
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly stopTimeoutMs: number;

  /** @param stopTimeoutS how long stopped runners may take to exit before they are killed, in s. */
  constructor(runners: readonly Runner[], stopTimeoutS: number, clock: Clock, log: Logger) {
    this.runners = runners;
    this.stopTimeoutMs = stopTimeoutS * 1000;
    this.clock = clock;
    this.log = log;
  }

  /** Whether the runners were told to stop. */
  get stopping(): boolean {
    return this.stoppedAtMs !== undefined;
  }

  /** Stops the runners in `running` (indexes), logging `why`; does nothing the second time. */
  stopAll(why: string, running: Iterable<number>): void {
    if (this.stopping) return;
    this.stoppedAtMs = this.clock.now();
    this.log.warning(`stopping every runner: ${why}`);
    for (const i of running) {
      const runner = this.runners[i]!;
      // A runner that does not answer in time is frozen (SIGSTOP, a stuck node): a signal would wait
      // as long, so it is killed. One that refused the call is ending: SIGTERM keeps its summary.
      runner.api.stop().catch((error: unknown) => (isRestTimeout(error) ? runner.kill() : this.terminate(i)));
    }
  }

  /**
   * Asks runner `i` to end by SIGTERM ({@link Runner.terminate}): one whose test has ended and that
   * lingers, or one whose REST API did not take the stop. Does nothing the second time.
   */
  terminate(i: number): void {
    if (this.terminatedAtMs.has(i)) return;
    this.terminatedAtMs.set(i, this.clock.now());
    const runner = this.runners[i]!;
    runner.terminate().catch(() => runner.kill());
  }

  /**
   * Kills, among `running` (indexes of runners that have not exited), those overdue: told to end
   * their linger more than the stop timeout ago, or, when their test has not ended (not in
   * `ended`), stopped more than the stop timeout ago.
   */
  async killOverdue(running: Iterable<number>, ended: ReadonlySet<number>): Promise<void> {
    const now = this.clock.now();
    const overdue = (since: number | undefined) => since !== undefined && now - since > this.stopTimeoutMs;
    for (const i of running) {
      if (!(overdue(this.terminatedAtMs.get(i)) || (!ended.has(i) && overdue(this.stoppedAtMs)))) continue;
      this.log.warning(`runner ${i} did not stop within ${this.stopTimeoutMs / 1000} s; killing it`);
      await this.runners[i]!.kill();
    }
  }
}

/**
 * Ends runners that never started (paused at status 4, after a failed setup()): SIGTERM each
 * ({@link Runner.terminate}), on which k6 writes its summary and exits (105, checked with k6
 * v2.2.0), as `k6 run` writes its summary after a failed setup(); kills those still there
 * `stopTimeoutS` later.
 */
export async function endPaused(
  runners: readonly Runner[],
  stopTimeoutS: number,
  clock: Clock,
): Promise<void> {
  for (const runner of runners) runner.terminate().catch(() => runner.kill());
  let ended = false;
  const all = Promise.all(runners.map((r) => r.exited)).then(() => {
    ended = true;
  });
  // Short waits, so that no timer holds the process once every runner has ended.
  const deadline = clock.now() + stopTimeoutS * 1000;
  while (!ended && clock.now() < deadline) await Promise.race([all, clock.sleep(200)]);
  if (!ended) await Promise.all(runners.map((r) => r.kill()));
}
