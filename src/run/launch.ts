import type { Backend, Runner } from '../backends/backend.ts';
import type { RunnerExit, RunPlan } from '../plan.ts';

/** The runners of one run, and how each ended so far (filled in as each one exits). */
export interface LaunchedRunners {
  runners: Runner[];
  /** Per runner (by index): its exit once it has ended, else `undefined`. */
  exits: ReadonlyArray<RunnerExit | undefined>;
}

/** The time limits of a run's stages, in s: what {@link runLifetimeS} adds up. */
export interface RunTimes {
  /** How long runners may take to be ready (placed, image pulled, VUs initialised): the barrier's limit. */
  startTimeoutS: number;
  /** The test's totalDuration (`k6 inspect`). */
  totalDurationS: number;
  /** Time allowed beyond totalDuration before the monitor stops every runner. */
  graceS: number;
  /** How long stopped runners may take to exit before they are killed. */
  stopTimeoutS: number;
  /**
   * setup() and teardown() (k6/lifecycle.ts `lifecycleOptions`): whether each is skipped (`noSetup`,
   * `noTeardown`) and its timeout (k6 `setupTimeout`, `teardownTimeout`).
   */
  lifecycle: { noSetup: boolean; noTeardown: boolean; setupTimeoutS: number; teardownTimeoutS: number };
}

/**
 * What {@link runLifetimeS} adds for the scheduled start (at most 5 s of lead and 10 s of
 * confirmation, scheduled-start.ts) and the end of the runners' linger (their summaries, the
 * reading of their logs, the deletion of their Pods), in s.
 */
export const LIFETIME_MARGIN_S = 30;

/**
 * The longest a run's runners can be needed while their orchestrator runs, from their launch, in
 * whole s: past it, the orchestrator has either ended every runner's linger or died, and a backend
 * may end what is left (Kubernetes: every runner Pod's `activeDeadlineSeconds`, so that a killed
 * CLI's runners do not linger for a day). Every stage at its limit, one after the other:
 *
 *   startTimeoutS + setupTimeoutS + totalDurationS + graceS + teardownTimeoutS + stopTimeoutS + 30
 *
 * (the barrier, setup(), the test and the monitor's deadline past it, teardown(), the stop,
 * {@link LIFETIME_MARGIN_S}); a setup() or teardown() that is skipped counts 0. With the defaults
 * (300, 60, 120, 60, 30) that is totalDuration plus 600 s.
 */
export function runLifetimeS(t: RunTimes): number {
  const setupS = t.lifecycle.noSetup ? 0 : t.lifecycle.setupTimeoutS;
  const teardownS = t.lifecycle.noTeardown ? 0 : t.lifecycle.teardownTimeoutS;
  return Math.ceil(
    t.startTimeoutS + setupS + t.totalDurationS + t.graceS + teardownS + t.stopTimeoutS + LIFETIME_MARGIN_S,
  );
}

/**
 * Launch stage: the backend's own checks (e.g. the credentials' permissions), then every runner of
 * the plan, paused, running the archive at `archivePath`, to be ended by the backend after
 * `lifetimeS` ({@link runLifetimeS}) at the latest. The returned `exits` fills in as runners end,
 * so later stages read a runner's exit without awaiting it.
 * @throws what {@link Backend.preflight} and {@link Backend.launch} throw (ConfigurationError for
 *   bad input); the caller cleans the backend up.
 */
export async function launch(
  backend: Backend,
  plan: RunPlan,
  archivePath: string,
  lifetimeS?: number,
): Promise<LaunchedRunners> {
  await backend.preflight?.();
  const runners = await backend.launch(plan, archivePath, lifetimeS);
  const exits: Array<RunnerExit | undefined> = runners.map(() => undefined);
  for (const [i, runner] of runners.entries()) {
    void runner.exited.then((exit) => {
      exits[i] = exit;
    });
  }
  return { runners, exits };
}
