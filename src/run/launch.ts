import type { Backend, Runner } from '../backends/backend.ts';
import type { RunnerExit, RunPlan } from '../plan.ts';

/** The runners of one run, and how each ended so far (filled in as each one exits). */
export interface LaunchedRunners {
  runners: Runner[];
  /** Per runner (by index): its exit once it has ended, else `undefined`. */
  exits: ReadonlyArray<RunnerExit | undefined>;
}

/**
 * Launch stage: the backend's own checks (e.g. the credentials' permissions), then every runner of
 * the plan, paused, running the archive at `archivePath`. The returned `exits` fills in as runners
 * end, so later stages read a runner's exit without awaiting it.
 * @throws what {@link Backend.preflight} and {@link Backend.launch} throw (ConfigurationError for
 *   bad input); the caller cleans the backend up.
 */
export async function launch(backend: Backend, plan: RunPlan, archivePath: string): Promise<LaunchedRunners> {
  await backend.preflight?.();
  const runners = await backend.launch(plan, archivePath);
  const exits: Array<RunnerExit | undefined> = runners.map(() => undefined);
  for (const [i, runner] of runners.entries()) {
    void runner.exited.then((exit) => {
      exits[i] = exit;
    });
  }
  return { runners, exits };
}
