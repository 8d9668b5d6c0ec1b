import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Backend, Runner } from '../backends/backend.ts';
import { type Clock, realClock } from '../clock.ts';
import type { RunConfig, RunConfigKey } from '../config.ts';
import { interruptedBeforeStart } from '../errors.ts';
import { checkOutputPaths } from '../inputs/output-paths.ts';
import { resolveK6Binary } from '../k6/binary.ts';
import { earliestEndS } from '../k6/executors.ts';
import { runHandleSummary } from '../k6/handle-summary.ts';
import { lifecycleOptions } from '../k6/lifecycle.ts';
import { thresholdPercentiles } from '../k6/thresholds.ts';
import type { Logger } from '../log.ts';
import type { RunPlan, ZonePlan } from '../plan.ts';
import { testWindowS } from '../result/build.ts';
import { writeResultOrKeep } from '../result/file.ts';
import { latencyIntervals } from '../result/interval-latency.ts';
import type { RunEnvironment, RunResult } from '../result/schema.ts';
import { assembleResult } from './assemble.ts';
import { barrier } from './barrier.ts';
import { type Collected, collectAll, cpuSecondsOf } from './collect.ts';
import { startIntervalMetrics } from './interval-receiver.ts';
import { launch, runLifetimeS } from './launch.ts';
import { monitor } from './monitor.ts';
import { k6FileOutputs, newRunId, planRun } from './plan.ts';
import { type Preflight, preflight, splittingWarnings } from './preflight.ts';
import { setupOnce } from './setup.ts';
import { startAll } from './start.ts';
import { endPaused } from './stop.ts';
import { teardownOnce } from './teardown.ts';

/**
 * The run pipeline, the same for every backend. Each stage has its own file in this folder:
 * preflight -> plan -> launch -> barrier -> setup -> start -> monitor (progress,
 * stop, teardown) -> collect -> aggregate (result/aggregate.ts) -> thresholds (k6/thresholds.ts) -> result
 * (result/build.ts, result/file.ts). docs/architecture.md draws it.
 */

/** What {@link runTest} needs besides the configuration. */
export interface RunDependencies {
  /** Makes the backend, given the k6 binary and a private work folder. */
  createBackend(k6Binary: string, workDir: string): Backend;
  log: Logger;
  signal?: AbortSignal;
  environment?: Partial<RunEnvironment>;
  /** How the user names each input (`--out`, `result-path`), for errors; the key otherwise. */
  inputNames?: Partial<Record<RunConfigKey, string>>;
  /** The run's id (the `k6d_run` tag on every sample, the result's `runId`); default a new one. */
  runId?: string;
  /**
   * The load zones (src/inputs/zones.ts): each gets its share of the test over its own runners,
   * and the config's runner count is ignored; the backend must place each zone's runners.
   */
  zones?: readonly ZonePlan[];
}

/**
 * The main job, for any backend: preflight (k6 archive + inspect), plan N runners, run them with a
 * synchronised start, aggregate, judge the thresholds globally, and write the result JSON
 * atomically to `config.resultPath`. The private work folder (archive, logs, summaries) is removed
 * at the end.
 * @throws ConfigurationError for bad input (before any runner starts: among them an output path
 *   that cannot be written, or from a runner that could not initialise the script); RunError `start` when the runners could not be started; RunError
 *   `interrupted` when interrupted before the start.
 */
export async function runTest(config: RunConfig, deps: RunDependencies): Promise<RunResult> {
  const k6Binary = resolveK6Binary(config.k6Binary);
  const name = (key: RunConfigKey) => deps.inputNames?.[key] ?? key;
  // Before the load: a run whose result cannot be written would be lost.
  const outputs = [
    { input: name('resultPath'), path: config.resultPath },
    ...(config.reportPath ? [{ input: name('reportPath'), path: config.reportPath }] : []),
    ...(config.htmlPath ? [{ input: name('htmlPath'), path: config.htmlPath }] : []),
    ...(config.junitPath ? [{ input: name('junitPath'), path: config.junitPath }] : []),
  ];
  const inputs = [{ input: name('script'), path: config.script }];
  await checkOutputPaths(outputs, inputs);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'k6-distributed-'));
  // A process.exit() (a second Ctrl-C) skips the finally below; the folder goes all the same.
  const removeWorkDir = () => rmSync(workDir, { recursive: true, force: true });
  process.on('exit', removeWorkDir);
  try {
    // A terminal's Ctrl-C also reaches `k6 archive`/`k6 inspect` (same process group): their
    // failure is then the interruption's, not the script's.
    const pre = await preflight({ k6Binary, script: config.script, k6Args: config.k6Args, workDir }).catch(
      async (error: unknown) => {
        throw (await abortedSoon(deps.signal)) ? interruptedBeforeStart() : error;
      },
    );
    if (deps.signal?.aborted) throw interruptedBeforeStart();
    const plan = planRun({
      runners: config.runners,
      maxVUs: pre.maxVUs,
      extraPercentiles: thresholdPercentiles(pre.thresholds),
      userRunArgs: pre.runArgs,
      tags: pre.tags,
      env: pre.env,
      runId: deps.runId ?? newRunId(),
      ...(deps.zones ? { zones: deps.zones } : {}),
    });
    deps.log.info(
      `preflight ok: k6 ${pre.k6Version}, ${pre.maxVUs} VUs at most, totalDuration ${pre.totalDurationS} s, ` +
        `${pre.thresholds.length} thresholds; ${plan.runners.length} runners`,
    );
    const backend = deps.createBackend(k6Binary, workDir);
    // Local runners write k6's own file outputs here: checked with ours, one file per runner.
    if (backend.name === 'local') await checkOutputPaths([...outputs, ...k6FileOutputs(plan)], inputs);
    for (const warning of [...plan.warnings, ...pre.warnings, ...splittingWarnings(pre, plan.runners.length)])
      deps.log.warning(warning);
    const result = await runDistributed({
      script: config.script,
      preflight: pre,
      plan,
      backend,
      workDir,
      log: deps.log,
      startTimeoutS: config.startTimeoutS,
      graceS: config.graceS,
      progressIntervalS: config.progressIntervalS,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.environment ? { environment: deps.environment } : {}),
    });
    if (plan.runId) result.runId = plan.runId;
    await writeResultOrKeep(config.resultPath, result, name('resultPath'));
    // `--summary-mode disabled` skips handleSummary in k6 too.
    if (pre.handleSummary && result.summary && pre.summaryMode !== 'disabled') {
      await runHandleSummary({
        k6Binary,
        script: config.script,
        data: result.summary,
        workDir,
        k6Args: config.k6Args,
        ...(typeof pre.options.handleSummaryTimeout === 'string'
          ? { handleSummaryTimeout: pre.options.handleSummaryTimeout }
          : {}),
        log: deps.log,
      });
    }
    return result;
  } finally {
    process.off('exit', removeWorkDir);
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Whether `signal` is aborted now or within 100 ms: a k6 child that the terminal's Ctrl-C ended
 * may be reported before this process's own SIGINT handler has run.
 */
async function abortedSoon(signal: AbortSignal | undefined): Promise<boolean> {
  if (!signal) return false;
  if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 100));
  return signal.aborted;
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
  /**
   * The run's private work folder (runTest's, in the system's temp folder): the local runners'
   * summaries are in it, so a missing summary is blamed on its removal when it is gone.
   */
  workDir?: string;
}

/**
 * Runs a planned test on a backend and returns its global result:
 * launch -> barrier -> setup (once) -> start -> monitor -> teardown (once) -> end of the linger ->
 * collect -> (cleanup) -> aggregate -> thresholds -> result. A setup() that fails inside k6 (it
 * threw, exit 107, or passed `setupTimeout`, exit 100) starts no load, as in `k6 run`: the runners
 * are ended so that they write their summaries, and the result is the partial one (verdict failed,
 * kind `runner`, `k6ExitCode` 107 or 100).
 * @throws ConfigurationError when a runner fails before the start for a reason in the script or
 *   its options (k6 exit 104, 107), with the runner and k6's reason; RunError `start` when runners
 *   do not become ready in time; RunError `interrupted` when `signal` aborts before the start. In
 *   every case the backend was cleaned up first.
 */
export async function runDistributed(options: RunOptions): Promise<RunResult> {
  const { backend, preflight: pre, log, signal } = options;
  const clock = options.clock ?? realClock;
  const stopTimeoutS = options.stopTimeoutS ?? 30;
  // Latency per interval: the runners push histograms to a receiver (here, or in each runner Pod).
  const intervals = await startIntervalMetrics(options.plan, { backend: backend.name, ...pre, log });
  const plan = intervals?.plan ?? options.plan;
  try {
    const lifecycle = lifecycleOptions(pre.options);
    const times = { startTimeoutS: options.startTimeoutS ?? 300, graceS: options.graceS ?? 120 };
    const lifetimeS = runLifetimeS({ ...times, stopTimeoutS, totalDurationS: pre.totalDurationS, lifecycle });
    const launched = await launch(backend, plan, pre.archivePath, lifetimeS);
    await barrier(launched, {
      startTimeoutS: times.startTimeoutS,
      clock,
      log,
      ...(signal ? { signal } : {}),
    });
    const setup = await setupOnce(launched.runners, {
      // Not asked for when the sources never name it: k6 would skip it, and the request would cost a round trip.
      skip: lifecycle.noSetup || pre.lifecycleNamed?.setup === false,
      timeoutS: lifecycle.setupTimeoutS,
      exported: pre.lifecycle?.setup ?? true,
      clock,
      log,
      ...(signal ? { signal } : {}),
    });
    // Interrupted during the barrier or setup(): no runner starts.
    if (signal?.aborted) throw interruptedBeforeStart();
    if (setup.failure) {
      // As `k6 run`: no load, but the summary (setup()'s own requests and metrics) and the result.
      await endPaused(launched.runners, stopTimeoutS, clock);
      const endedAtMs = clock.now();
      return assembleResult(options, {
        launched,
        start: { startedAtMs: endedAtMs - setup.durationMs, offsetsMs: [], skewMs: 0 },
        endedAtMs,
        durationS: setup.durationMs / 1000,
        ...(setup.k6ExitCode === undefined ? {} : { lifecycleK6ExitCode: setup.k6ExitCode }),
        failures: [setup.failure],
        contains: {},
        vusSamples: [],
        collected: await collectThenClean(launched.runners, backend, log, options.workDir),
      });
    }
    const cpuAtStart = await cpuSecondsOf(launched.runners);
    let cpuAtEnd: Array<number | undefined> = [];
    const start = await startAll(launched.runners, clock, log, backend, {
      earliestEndS: earliestEndS(pre.options.scenarios),
    });
    let teardown: Awaited<ReturnType<typeof teardownOnce>> = { durationMs: 0 };
    const monitored = await monitor(launched, start.startedAtMs, {
      totalDurationS: pre.totalDurationS,
      graceS: times.graceS,
      stopTimeoutS,
      progressIntervalS: options.progressIntervalS ?? 10,
      // Adaptive, as the latency's intervals: about 60 points, one a second at the finest.
      timelineIntervalS: Math.max(1, latencyIntervals(pre.totalDurationS).intervalMs / 1000),
      onTestEnded: async (lingering, endLinger) => {
        cpuAtEnd = await cpuSecondsOf(launched.runners);
        teardown = await teardownOnce(launched.runners, lingering, {
          endLinger,
          skip: lifecycle.noTeardown || pre.lifecycleNamed?.teardown === false,
          timeoutS: lifecycle.teardownTimeoutS,
          exported: pre.lifecycle?.teardown ?? true,
          clock,
          log,
        });
        return teardown.failure;
      },
      thresholds: pre.thresholds,
      clock,
      log,
      ...(signal ? { signal } : {}),
    });
    // The runners' own receivers' deltas (Kubernetes), read beside the summaries, before the
    // cleanup removes their Pods.
    const collected = await collectThenClean(
      launched.runners,
      backend,
      log,
      options.workDir,
      intervals?.gather(launched.runners),
    );
    // As in k6, the test's duration holds setup() and teardown() (k6 marks the start before setup
    // and the end after teardown): counters' rates are over it.
    const durationS =
      testWindowS(collected.summaries, start.offsetsMs, (monitored.endedAtMs - start.startedAtMs) / 1000) +
      (setup.durationMs + teardown.durationMs) / 1000;
    return assembleResult(options, {
      launched,
      start,
      endedAtMs: monitored.endedAtMs,
      durationS,
      ...(setup.data ? { setupData: setup.data } : {}),
      ...(teardown.k6ExitCode === undefined ? {} : { lifecycleK6ExitCode: teardown.k6ExitCode }),
      failures: monitored.failures,
      contains: monitored.contains,
      vusSamples: monitored.vusSamples,
      collected,
      timeline: ((t) => intervals?.finish(t, start.startedAtMs) ?? t)(
        monitored.progress.finish(monitored.endedAtMs, collected.summaries),
      ),
      cpuSeconds: cpuAtStart.map((at, i) =>
        at === undefined || cpuAtEnd[i] === undefined ? undefined : cpuAtEnd[i]! - at,
      ),
    });
  } catch (error) {
    await backend.cleanup();
    throw error;
  } finally {
    await intervals?.close();
  }
}

/**
 * Collect stage, then the backend's cleanup: every summary is read before anything is cleaned up
 * (the files and Pod logs go with the cleanup), and so is whatever `alsoBeforeCleanup` reads (the
 * runners' interval receivers' logs), beside it. Never rejects for `alsoBeforeCleanup`'s sake: it
 * never rejects (IntervalMetrics.gather).
 */
async function collectThenClean(
  runners: readonly Runner[],
  backend: Backend,
  log: Logger,
  workDir: string | undefined,
  alsoBeforeCleanup?: Promise<void>,
): Promise<Collected> {
  const [collected] = await Promise.all([
    collectAll(runners, backend.name === 'local' ? workDir : undefined),
    alsoBeforeCleanup,
  ]);
  if (collected.fromExport.length > 0) {
    log.info(
      `runner ${collected.fromExport.join(', ')}: no compact summary (its handleSummary did not finish), k6's summary export read instead`,
    );
  }
  await backend.cleanup();
  return collected;
}
