import type { Backend, Runner, StartOptions } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import { errorMessage, RunError } from '../errors.ts';
import type { Logger } from '../log.ts';

/** When the runners started. */
export interface StartInfo {
  /**
   * Epoch ms at which the un-pause requests were sent (no runner can run before it), or the
   * instant of a scheduled start ({@link Backend.startAll}).
   */
  startedAtMs: number;
  /**
   * Per runner: when it confirmed its start, in ms after the first confirmation; for a scheduled
   * start, when it was un-paused on its node, in ms after the first.
   */
  offsetsMs: number[];
  /** The largest of {@link offsetsMs}: how far apart the runners started, in ms. */
  skewMs: number;
}

/**
 * Start stage: the backend's scheduled start where it has one ({@link Backend.startAll}: each
 * Kubernetes runner un-pauses itself at one instant of its node's clock), else un-pauses every
 * runner at once (`PATCH /v1/status` `paused: false`, all sent in the same tick on the connections
 * the barrier's polling kept warm); measures the start skew from the confirmations.
 * @throws RunError `start` naming the first runner that could not be started.
 */
export async function startAll(
  runners: readonly Runner[],
  clock: Clock,
  log: Logger,
  backend?: Pick<Backend, 'startAll'>,
  options: StartOptions = { earliestEndS: 0 },
): Promise<StartInfo> {
  const scheduled = await backend?.startAll?.(runners, options).catch((error: unknown) => {
    throw new RunError('start', errorMessage(error));
  });
  if (scheduled) {
    const { startedAtMs, offsetsMs, confirmedSpreadMs } = scheduled;
    const skewMs = Math.max(...offsetsMs);
    log.info(
      `started ${runners.length} runners at one instant; start skew ${skewMs.toFixed(1)} ms (k6 confirmed within ${confirmedSpreadMs.toFixed(0)} ms)`,
    );
    return { startedAtMs, offsetsMs, skewMs };
  }
  const startedAtMs = clock.now();
  const confirmedAt = await Promise.all(
    runners.map((r) =>
      r.api.start().then(
        () => clock.now(),
        (error: unknown) => {
          throw new RunError('start', `runner ${r.index} did not start: ${errorMessage(error)}`);
        },
      ),
    ),
  );
  const first = Math.min(...confirmedAt);
  const offsetsMs = confirmedAt.map((t) => t - first);
  const skewMs = Math.max(...offsetsMs);
  log.info(`started ${runners.length} runners; start skew ${skewMs.toFixed(1)} ms`);
  return { startedAtMs, offsetsMs, skewMs };
}
