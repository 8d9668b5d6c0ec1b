import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Backend } from '../backends/backend.ts';
import type { RunConfig } from '../config.ts';
import { resolveK6Binary } from '../k6/binary.ts';
import { type Preflight, preflight, splittingWarnings } from '../k6/preflight.ts';
import { applyDeclaredContains } from '../k6/summary.ts';
import { evaluateThresholds, thresholdPercentiles } from '../k6/thresholds.ts';
import type { Logger } from '../log.ts';
import { aggregateSummaries, mergeGroups } from '../result/aggregate.ts';
import { buildResult, testWindowS } from '../result/build.ts';
import { writeResultFile } from '../result/file.ts';
import type { RunEnvironment, RunResult } from '../result/result.ts';
import { barrier } from './barrier.ts';
import { type Clock, realClock } from './clock.ts';
import { collectAll } from './collect.ts';
import { launch } from './launch.ts';
import { monitor } from './monitor.ts';
import { planRun, type RunPlan } from './plan.ts';
import { startAll } from './start.ts';

/**
 * The run pipeline, the same for every backend. Each stage has its own file in this folder:
 * preflight (k6/preflight.ts) -> plan -> launch -> barrier -> start -> monitor (progress, stop)
 * -> collect -> aggregate (result/aggregate.ts) -> thresholds (k6/thresholds.ts) -> result
 * (result/build.ts, result/file.ts). docs/architecture.md draws it.
 */

/** What {@link runTest} needs besides the configuration. */
export interface RunDependencies {
  /** Makes the backend, given the k6 binary and a private work folder. */
  createBackend(k6Binary: string, workDir: string): Backend;
  log: Logger;
  signal?: AbortSignal;
  environment?: Partial<RunEnvironment>;
}

/**
 * The main job, for any backend: preflight (k6 archive + inspect), plan N runners, run them with a
 * synchronised start, aggregate, judge the thresholds globally, and write the result JSON
 * atomically to `config.resultPath`. The private work folder (archive, logs, summaries) is removed
 * at the end.
 * @throws ConfigurationError for bad input (before any runner starts, or from a runner that could
 *   not initialise the script); RunError `start` when the runners could not be started; RunError
 *   `interrupted` when interrupted before the start.
 */
export async function runTest(config: RunConfig, deps: RunDependencies): Promise<RunResult> {
  const k6Binary = resolveK6Binary(config.k6Binary);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'k6-distributed-'));
  try {
    const pre = await preflight({ k6Binary, script: config.script, k6Args: config.k6Args, workDir });
    const plan = planRun({
      runners: config.runners,
      maxVUs: pre.maxVUs,
      extraPercentiles: thresholdPercentiles(pre.thresholds),
      userRunArgs: pre.runArgs,
      tags: pre.tags,
    });
    deps.log.info(
      `preflight ok: k6 ${pre.k6Version}, ${pre.maxVUs} VUs at most, totalDuration ${pre.totalDurationS} s, ` +
        `${pre.thresholds.length} thresholds; ${plan.runners.length} runners`,
    );
    for (const warning of [...plan.warnings, ...pre.warnings, ...splittingWarnings(pre, plan.runners.length)])
      deps.log.warning(warning);
    const result = await runDistributed({
      script: config.script,
      preflight: pre,
      plan,
      backend: deps.createBackend(k6Binary, workDir),
      log: deps.log,
      startTimeoutS: config.startTimeoutS,
      graceS: config.graceS,
      progressIntervalS: config.progressIntervalS,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.environment ? { environment: deps.environment } : {}),
    });
    applyDeclaredContains(result.metrics, pre.declaredContains);
    await writeResultFile(config.resultPath, result);
    return result;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Options of {@link runDistributed}. */
export interface RunOptions {
  /** The script path as the user gave it (for the result). */
  script: string;
  preflight: Preflight;
  plan: RunPlan;
  backend: Backend;
  /** Extra facts about the runners for the result (image, resources, node selector). */
  environment?: Partial<RunEnvironment>;
  log: Logger;
  /** Aborting it (Ctrl-C, a cancelled workflow) stops every runner; the partial result is returned. */
  signal?: AbortSignal;
  /** How long runners may take to reach status 4 (VUs initialised), in s. Default 300. */
  startTimeoutS?: number;
  /** Time allowed beyond the test's totalDuration (setup, teardown, summary), in s. Default 120. */
  graceS?: number;
  /** How long stopped runners may take to exit before they are killed, in s. Default 30. */
  stopTimeoutS?: number;
  /** Seconds between progress lines. Default 10. */
  progressIntervalS?: number;
  /** The time source; the real clock unless a test gives a fake one. */
  clock?: Clock;
}

/**
 * Runs a planned test on a backend and returns its global result:
 * launch -> barrier -> start -> monitor -> collect -> (cleanup) -> aggregate -> thresholds -> result.
 * @throws ConfigurationError when a runner fails before the start for a reason in the script or
 *   its options (k6 exit 104, 107), with the runner and k6's reason; RunError `start` when runners
 *   do not become ready in time; RunError `interrupted` when `signal` aborts before the start. In
 *   every case the backend was cleaned up first.
 */
export async function runDistributed(options: RunOptions): Promise<RunResult> {
  const { backend, plan, preflight: pre, log, signal } = options;
  const clock = options.clock ?? realClock;
  try {
    const launched = await launch(backend, plan, pre.archivePath);
    await barrier(launched, {
      startTimeoutS: options.startTimeoutS ?? 300,
      clock,
      log,
      ...(signal ? { signal } : {}),
    });
    const start = await startAll(launched.runners, clock, log);
    const monitored = await monitor(launched, start.startedAtMs, {
      totalDurationS: pre.totalDurationS,
      graceS: options.graceS ?? 120,
      stopTimeoutS: options.stopTimeoutS ?? 30,
      progressIntervalS: options.progressIntervalS ?? 10,
      clock,
      log,
      ...(signal ? { signal } : {}),
    });
    // Every summary is read before anything is cleaned up.
    const collected = await collectAll(launched.runners);
    await backend.cleanup();
    const durationS = testWindowS(
      collected.summaries,
      start.offsetsMs,
      (monitored.endedAtMs - start.startedAtMs) / 1000,
    );
    const present = collected.summaries.filter((s) => s !== undefined);
    const metrics = aggregateSummaries(present, {
      durationS,
      percentiles: thresholdPercentiles(pre.thresholds),
      contains: monitored.contains,
    });
    const thresholds = evaluateThresholds(pre.thresholds, metrics);
    return buildResult({
      script: options.script,
      environment: {
        backend: backend.name,
        k6Version: pre.k6Version,
        runners: launched.runners.length,
        scriptHash: pre.scriptHash,
        ...options.environment,
      },
      startedAtMs: start.startedAtMs,
      endedAtMs: monitored.endedAtMs,
      durationS,
      startSkewMs: start.skewMs,
      metrics,
      rootGroup: mergeGroups(present.map((s) => s.rootGroup)),
      thresholds,
      failures: [...monitored.failures, ...collected.failures],
      runners: launched.runners.map((_, i) => ({
        segment: plan.runners[i]!.segment,
        exit: launched.exits[i],
        summary: collected.summaries[i],
        startOffsetMs: start.offsetsMs[i]!,
        logTail: collected.leftovers[i]!.logTail,
        ...(collected.leftovers[i]!.node ? { node: collected.leftovers[i]!.node } : {}),
      })),
    });
  } catch (error) {
    await backend.cleanup();
    throw error;
  }
}
