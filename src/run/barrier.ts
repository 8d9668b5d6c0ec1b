import type { Runner } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import { ConfigurationError, errorMessage, interruptedBeforeStart, RunError } from '../errors.ts';
import { isConfigurationExit } from '../k6/exit-codes.ts';
import { K6_STATUS, statusName } from '../k6/rest.ts';
import type { Logger } from '../log.ts';
import { runnerFailureLine } from './collect.ts';
import type { LaunchedRunners } from './launch.ts';

/** How often the barrier polls the runners that are not ready yet, in ms. */
const POLL_MS = 100;
/** How often the barrier says how many runners are ready, in ms. */
const WAITING_LOG_MS = 10_000;

/** Options of {@link barrier}. */
export interface BarrierOptions {
  /** How long runners may take to reach status 4 (VUs initialised), in s. */
  startTimeoutS: number;
  signal?: AbortSignal;
  clock: Clock;
  log: Logger;
}

/**
 * Barrier stage: waits until every runner reports status 4 (`PausedBeforeRun`: VUs initialised,
 * waiting to be un-paused) on `GET /v1/status`.
 * @throws ConfigurationError when a runner exits before the start with a configuration exit code
 *   (104 invalid configuration, 107 script exception), naming the runner and k6's error line;
 *   RunError `start` when a runner exits otherwise, is past status 4 (it was not paused), or not
 *   every runner is ready within `startTimeoutS`; RunError `interrupted` when `signal` aborts.
 */
export async function barrier({ runners, exits }: LaunchedRunners, options: BarrierOptions): Promise<void> {
  const { clock, log } = options;
  const begin = clock.now();
  const ready = new Set<number>();
  /** Per runner not ready: what it last answered, for the timeout's message. */
  const lastAnswer = new Map<number, string>();
  let lastLog = begin;
  while (ready.size < runners.length) {
    if (options.signal?.aborted) throw interruptedBeforeStart();
    const failed = runners.find((r) => exits[r.index] !== undefined);
    if (failed) {
      const exit = exits[failed.index]!;
      const message = await runnerFailureLine(failed, exit, 'before the start');
      throw isConfigurationExit(exit.code) ? new ConfigurationError(message) : new RunError('start', message);
    }
    if (clock.now() - begin > options.startTimeoutS * 1000) {
      const waiting = runners
        .filter((r) => !ready.has(r.index))
        .map((r) => `runner ${r.index} (${lastAnswer.get(r.index) ?? 'no answer'})`);
      throw new RunError(
        'start',
        `runners not ready after ${options.startTimeoutS} s (start timeout): ${waiting.join(', ')}`,
      );
    }
    const waiting = runners.filter((r) => !ready.has(r.index));
    for (const [runner, answer] of waiting.map((r) => [r, pollStatus(r)] as const)) {
      const status = await answer;
      if (typeof status === 'string') {
        lastAnswer.set(runner.index, status);
        continue;
      }
      lastAnswer.set(runner.index, statusName(status));
      if (status === K6_STATUS.PausedBeforeRun) ready.add(runner.index);
      else if (status > K6_STATUS.PausedBeforeRun) {
        throw new RunError(
          'start',
          `runner ${runner.index} is ${statusName(status)} before the start: it was not paused`,
        );
      }
    }
    if (clock.now() - lastLog > WAITING_LOG_MS) {
      lastLog = clock.now();
      // A runner its backend knows is ready counts, though its status still says it initialises.
      const count = runners.filter((r) => ready.has(r.index) || r.ready?.()).length;
      log.info(`waiting for runners: ${count}/${runners.length} ready`);
    }
    if (ready.size < runners.length) await clock.sleep(POLL_MS);
  }
  log.info(
    `all ${runners.length} runners ready (status 4, PausedBeforeRun) after ${Math.round(clock.now() - begin)} ms`,
  );
}

/** A runner's status number, or why its REST API did not answer. */
async function pollStatus(runner: Runner): Promise<number | string> {
  try {
    return (await runner.api.status()).status;
  } catch (error) {
    return `REST API not answering: ${errorMessage(error)}`;
  }
}
