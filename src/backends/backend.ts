import type { RunnerApi } from '../k6/rest.ts';
import type { RunnerExit, RunPlan } from '../plan.ts';
import type { IntervalDelta } from '../result/interval-latency.ts';

/**
 * The interface both backends implement: the local backend (N k6 processes on this machine) and
 * the Kubernetes backend (one Pod per runner). The orchestrator drives runners only through
 * it, so the barrier, the start, the monitor, the aggregation and the verdict are the same on both.
 */

/** One launched runner. */
export interface Runner {
  /** 0-based, the same as the plan's runner index. */
  index: number;
  /** Its k6 REST API. */
  api: RunnerApi;
  /** Settles once the runner has ended; never rejects. */
  exited: Promise<RunnerExit>;
  /** Ends the runner at once (SIGKILL, Pod deletion), for one that did not stop through the REST API. */
  kill(): Promise<void>;
  /**
   * Ends a runner gracefully (SIGTERM), one whose test has ended and lingers, or one whose REST API
   * did not take the stop. Runners run with `--linger`: once its test has ended (status
   * 9 Ended, 10 Interrupted or 11 MarkedAsFailed) k6 keeps its REST API up until a signal, so that
   * teardown() can run once after every runner finished; on SIGTERM it writes its summary and
   * exits with its test's own code (0, 99, 103, 108, 110). Local: SIGTERM to the process; Kubernetes:
   * the Pod is deleted with its grace period (SIGTERM), its log followed to the end first. Resolves
   * once asked, not once exited (watch {@link exited}).
   */
  terminate(): Promise<void>;
  /**
   * Reads what the runner left: its summary, the compact one or k6's `--summary-export` JSON, as
   * text or as its UTF-8 bytes (undefined when it wrote none; `parseRunnerSummary` reads either) and
   * the last lines of its log; `unreadable` says why nothing could be read (e.g. `the log of Pod P
   * could not be read: …`, `its node N is gone`). Called after the runner ended and before
   * {@link Backend.cleanup}.
   */
  collect(): Promise<{
    summary?: string | Uint8Array;
    logTail: string;
    node?: string;
    unreadable?: string;
    /** How many times k6 warned "Insufficient VUs" in the runner's whole log; absent when unread. */
    insufficientVUs?: number;
  }>;
  /**
   * Optional: the CPU time the runner's process has used so far, in s (user + system, every
   * thread); undefined when it cannot be read (Local: `/proc/<pid>/stat` on Linux; Kubernetes: not
   * read yet).
   */
  cpuSeconds?(): Promise<number | undefined>;
  /**
   * Optional: settles with the runner's end status (9 Ended, 10 Interrupted, 11 MarkedAsFailed, as
   * `GET /v1/status` gives it) as soon as the backend sees the runner's test end by itself
   * (Kubernetes: the barrier container's log), so the monitor learns it without polling; never
   * settles otherwise.
   */
  testEnded?: Promise<number>;
  /**
   * Optional: whether the backend already knows the runner is ready (at status 4, VUs initialised)
   * while its status answers still say it initialises (Kubernetes: its barrier container's log said
   * `k6d-ready`, and its confirmation through the pod proxy waits until every runner is ready), so
   * that the barrier's progress line counts it.
   */
  ready?(): boolean;
  /**
   * Optional: the runner's own record of its active VUs while its test ran, taken beside it
   * (Kubernetes: the barrier container samples `GET /v1/status` on the Pod's loopback); undefined
   * until its test has ended, and when the record is incomplete.
   */
  vusRecord?(): VusRecord | undefined;
  /**
   * Optional: the runner's per-interval histogram deltas recorded beside it (Kubernetes: its Pod's
   * interval receiver, read from its log once), their times on this machine's clock; absent where
   * the orchestrator receives them itself (local). Called after the runner ended and before
   * {@link Backend.cleanup}; never rejects.
   */
  intervalDeltas?(): Promise<RunnerIntervals>;
}

/** A runner's per-interval histogram deltas, or why there are none (one line, naming the runner). */
export type RunnerIntervals = { deltas: IntervalDelta[] } | { missing: string };

/**
 * A runner's active VUs over its test, as a step function: the count at each change, sampled at
 * most once per `periodMs` of the wall clock (the first sample is always a change).
 */
export interface VusRecord {
  /** Epoch ms (of the runner's clock) and active VUs at each change, in time order; at least one. */
  changes: Array<{ atMs: number; vus: number }>;
  /** Epoch ms at which its test was seen ended: no VU is active after it. */
  endedAtMs: number;
  /** The sampling period, in ms. */
  periodMs: number;
}

/** What a backend's scheduled start ({@link Backend.startAll}) may use. */
export interface StartOptions {
  /**
   * The earliest the test can end by itself, in s after the start (0: any time): a runner that
   * watches for its end may look more often from then on.
   */
  earliestEndS: number;
  /**
   * Optional: the instant to start at, epoch ms of this machine's clock, instead of now plus the
   * backend's own lead: one instant for the backends of several load zones (src/backends/zones.ts).
   */
  atMs?: number;
}

/** When the runners of a scheduled start ({@link Backend.startAll}) started. */
export interface ScheduledStart {
  /**
   * Epoch ms of this machine's clock at which the runners were to start: the scheduled instant,
   * read from the runners' clock into this one's (an estimate, late by at most the time the
   * runners' lines take to arrive).
   */
  startedAtMs: number;
  /**
   * Per runner: when it was un-paused, in ms after the first runner, by the runners' clocks. k6
   * resumes as it reads the un-pause (`SetPaused`, k6 `api/v1/status_routes.go`), before it
   * answers, and a paused k6 is idle, so this is when its test started.
   */
  offsetsMs: number[];
  /**
   * The spread of the runners' confirmations (k6's answers), in ms: an answer waits behind the
   * test it has just started on a busy node, so this bounds the skew from above.
   */
  confirmedSpreadMs: number;
  /**
   * Optional: when the first runner was un-paused, epoch ms of this machine's clock (its node's
   * time moved by the backend's clock estimate), so that the starts of several backends (load
   * zones) can be put on one time line.
   */
  firstAtMs?: number;
}

/** A place where runners run. */
export interface Backend {
  readonly name: 'local' | 'kubernetes';
  /**
   * Checks what can be checked before anything is created (e.g. the credentials' permissions).
   * @throws ConfigurationError naming what is missing.
   */
  preflight?(): Promise<void>;
  /**
   * Starts every runner of the plan, paused (`--paused`), running the archive at `archivePath`.
   * Resolves once every runner exists; readiness is the orchestrator's barrier. `lifetimeS` is the
   * longest the runners can be needed from now, in s (src/run/launch.ts `runLifetimeS`): a backend
   * ends runners that outlive it by themselves, so an orchestrator that died (SIGKILL) leaves no
   * runner for long (Kubernetes: the Pods' `activeDeadlineSeconds`; the local backend's watchdog
   * acts at once and ignores it).
   * @throws Error (or ConfigurationError) when runners cannot be created; what was created is
   *   still removed by {@link cleanup}.
   */
  launch(plan: RunPlan, archivePath: string, lifetimeS?: number): Promise<Runner[]>;
  /**
   * Optional: starts every runner (all ready, paused) at one instant of their own clocks, instead
   * of the orchestrator sending each its un-pause request at the start, whose spread grows with
   * the requests' way there (the API server at scale). Resolves once every runner confirmed its
   * start; `undefined` when it cannot be used (the orchestrator then un-pauses each runner through
   * its REST API, `Runner.api.start`).
   * @throws Error naming the runner that could not be started.
   */
  startAll?(runners: readonly Runner[], options: StartOptions): Promise<ScheduledStart | undefined>;
  /** Removes everything {@link launch} made: no process, Pod or ConfigMap stays. Idempotent. */
  cleanup(): Promise<void>;
}
