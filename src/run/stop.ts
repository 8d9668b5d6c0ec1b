import type { Runner } from '../backends/backend.ts';
import type { Logger } from '../log.ts';
import type { Clock } from './clock.ts';

/**
 * Stop stage: stops every runner still running once (`PATCH /v1/status` `stopped: true`; a runner
 * whose REST API does not take it is killed), and kills the runners that have not exited
 * `stopTimeoutS` after the stop.
 */
export class Stopper {
  /** Epoch ms of the stop; `undefined` until {@link stopAll} was called. */
  private stoppedAtMs: number | undefined;
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
      runner.api.stop().catch(() => runner.kill());
    }
  }

  /** Kills the runners in `running` when the stop timeout has passed since {@link stopAll}. */
  async killOverdue(running: Iterable<number>): Promise<void> {
    if (this.stoppedAtMs === undefined || this.clock.now() - this.stoppedAtMs <= this.stopTimeoutMs) return;
    for (const i of running) {
      this.log.warning(`runner ${i} did not stop within ${this.stopTimeoutMs / 1000} s; killing it`);
      await this.runners[i]!.kill();
    }
  }
}
