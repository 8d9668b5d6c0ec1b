import { aggregateSummaries, mergeGroups } from './aggregate.ts';
import type { Backend, Runner, RunnerExit } from './backends/backend.ts';
import { ConfigurationError, errorMessage } from './errors.ts';
import { describeExit, K6_EXIT, runnerCompleted } from './k6/exit-codes.ts';
import { k6ErrorLine } from './k6/log.ts';
import type { Preflight } from './k6/preflight.ts';
import { K6_STATUS, type K6LiveMetric, statusName } from './k6/rest.ts';
import { parseRunnerSummary, type RunnerSummary } from './k6/summary.ts';
import { evaluateThresholds, thresholdPercentiles } from './k6/thresholds.ts';
import type { RunPlan } from './plan.ts';
import {
  type MetricContains,
  RESULT_SCHEMA,
  type RunEnvironment,
  type RunnerResult,
  type RunResult,
} from './result.ts';

/**
 * The orchestration of one distributed run, the same for every backend:
 * launch paused -> barrier (every runner at status 4, PausedBeforeRun) -> start all at once
 * (PATCH paused:false, start skew measured) -> monitor (progress, failures, deadline, Ctrl-C) ->
 * collect every summary before cleanup -> aggregate -> thresholds -> result.
 */

/** Where progress and warnings go (the CLI's stderr, the action's log). */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
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
}

/** A run that could not start; no result exists. Runners were removed before it is thrown. */
export class RunStartError extends Error {
  override name = 'RunStartError';
}

const ABORT_ON_FAIL_LOG = 'at least one has abortOnFail enabled';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function abortPromise(signal: AbortSignal | undefined): Promise<'abort'> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve('abort');
    else signal.addEventListener('abort', () => resolve('abort'), { once: true });
  });
}

/**
 * Runs a planned test on a backend and returns its global result.
 * @throws ConfigurationError when a runner fails before the start for a reason in the script or
 *   its options (k6 exit 104, 107, …), with the runner and k6's reason; RunStartError when runners
 *   do not become ready in time or the run is interrupted before the start. In every case the
 *   backend was cleaned up first.
 */
export async function runDistributed(options: RunOptions): Promise<RunResult> {
  const { backend, plan, preflight, log } = options;
  let runners: Runner[] = [];
  try {
    await backend.preflight?.();
    runners = await backend.launch(plan, preflight.archivePath);
    const exits: Array<RunnerExit | undefined> = runners.map(() => undefined);
    runners.forEach((r, i) => {
      void r.exited.then((e) => {
        exits[i] = e;
      });
    });
    await barrier(runners, exits, options);
    const start = await startAll(runners, log);
    const monitor = await monitorRun(runners, exits, start.startedAtMs, options);
    // Every summary is read before anything is cleaned up.
    const collected = await Promise.all(runners.map((r) => r.collect()));
    await backend.cleanup();
    return buildResult({ options, runners, exits, collected, start, monitor });
  } catch (error) {
    await backend.cleanup();
    throw error;
  }
}

async function barrier(
  runners: Runner[],
  exits: Array<RunnerExit | undefined>,
  options: RunOptions,
): Promise<void> {
  const timeoutMs = (options.startTimeoutS ?? 300) * 1000;
  const begin = Date.now();
  const ready = new Set<number>();
  const last = new Map<number, string>();
  let lastLog = begin;
  while (ready.size < runners.length) {
    if (options.signal?.aborted)
      throw new RunStartError('interrupted before the start: no runner had started');
    const failed = runners.find((r) => exits[r.index] !== undefined);
    if (failed) {
      const exit = exits[failed.index]!;
      const { logTail } = await failed.collect();
      const reason = exit.reason ?? describeExit(exit.code, exit.signal);
      const detail = logTail ? `: ${k6ErrorLine(logTail).slice(0, 300)}` : '';
      const message = `runner ${failed.index} failed before the start (${reason})${detail}`;
      if (exit.code === K6_EXIT.invalidConfig || exit.code === K6_EXIT.scriptException) {
        throw new ConfigurationError(message);
      }
      throw new RunStartError(message);
    }
    if (Date.now() - begin > timeoutMs) {
      const waiting = runners
        .filter((r) => !ready.has(r.index))
        .map((r) => `runner ${r.index} (${last.get(r.index) ?? 'no answer'})`);
      throw new RunStartError(
        `runners not ready after ${options.startTimeoutS ?? 300} s (start timeout): ${waiting.join(', ')}`,
      );
    }
    await Promise.all(
      runners
        .filter((r) => !ready.has(r.index))
        .map(async (r) => {
          try {
            const s = await r.api.status();
            last.set(r.index, statusName(s.status));
            if (s.status === K6_STATUS.PausedBeforeRun) ready.add(r.index);
            else if (s.status > K6_STATUS.PausedBeforeRun) {
              throw new RunStartError(
                `runner ${r.index} is ${statusName(s.status)} before the start: it was not paused`,
              );
            }
          } catch (error) {
            if (error instanceof RunStartError) throw error;
            last.set(r.index, `REST API not answering: ${errorMessage(error)}`);
          }
        }),
    );
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      options.log.info(`waiting for runners: ${ready.size}/${runners.length} ready`);
    }
    if (ready.size < runners.length) await sleep(100);
  }
  options.log.info(
    `all ${runners.length} runners ready (status 4, PausedBeforeRun) after ${Date.now() - begin} ms`,
  );
}

interface StartInfo {
  /** Epoch ms at which the un-pause requests were sent: no runner can run before it. */
  startedAtMs: number;
  /** Per runner: when it confirmed its start, in ms after the first confirmation. */
  offsetsMs: number[];
  skewMs: number;
}

async function startAll(runners: Runner[], log: Logger): Promise<StartInfo> {
  const epoch = Date.now() - performance.now();
  const sentAt = performance.now();
  // All PATCHes go out in the same tick, on connections the barrier's polling kept warm.
  const done = await Promise.all(
    runners.map((r) =>
      r.api.start().then(
        () => performance.now(),
        (error: unknown) => {
          throw new RunStartError(`runner ${r.index} did not start: ${errorMessage(error)}`);
        },
      ),
    ),
  );
  const first = Math.min(...done);
  const offsetsMs = done.map((t) => t - first);
  const skewMs = Math.max(...offsetsMs);
  log.info(`started ${runners.length} runners; start skew ${skewMs.toFixed(1)} ms`);
  return { startedAtMs: epoch + sentAt, offsetsMs, skewMs };
}

interface MonitorInfo {
  failures: string[];
  /** Per runner: the reason it failed, if it did. */
  runnerFailures: Map<number, string>;
  endedAtMs: number;
  contains: Record<string, MetricContains>;
}

async function monitorRun(
  runners: Runner[],
  exits: Array<RunnerExit | undefined>,
  startedAtMs: number,
  options: RunOptions,
): Promise<MonitorInfo> {
  const { log } = options;
  const failures: string[] = [];
  const runnerFailures = new Map<number, string>();
  const contains: Record<string, MetricContains> = {};
  const deadline = startedAtMs + (options.preflight.totalDurationS + (options.graceS ?? 120)) * 1000;
  const progressMs = (options.progressIntervalS ?? 10) * 1000;
  const stopTimeoutMs = (options.stopTimeoutS ?? 30) * 1000;
  // Once handled, the abort is replaced by a promise that never settles, so the loop waits again.
  let aborted: Promise<'abort'> = abortPromise(options.signal);
  let stoppedAt: number | undefined;
  let nextProgress = Date.now() + progressMs;
  const live: LiveTotals = { at: Date.now(), requests: 0, perRunner: new Map() };
  const pending = new Set(runners.map((r) => r.index));

  const stopAll = (why: string) => {
    if (stoppedAt !== undefined) return;
    stoppedAt = Date.now();
    log.warn(`stopping every runner: ${why}`);
    for (const r of runners) {
      if (pending.has(r.index)) r.api.stop().catch(() => r.kill());
    }
  };

  while (pending.size > 0) {
    const exitEvents = [...pending].map((i) => runners[i]!.exited.then(() => ({ kind: 'exit' as const, i })));
    const event = await Promise.race([
      ...exitEvents,
      sleep(1000).then(() => ({ kind: 'tick' as const })),
      aborted.then(() => ({ kind: 'abort' as const })),
    ]);
    // The interruption first: runners that a terminal's Ctrl-C reached too exit 105, which is not their failure.
    if (event.kind === 'abort') {
      aborted = new Promise(() => {});
      if (stoppedAt === undefined) {
        failures.push('interrupted: the run was cancelled and every runner was stopped');
        stopAll('interrupted');
      }
    }
    for (const i of [...pending]) {
      const exit = exits[i];
      if (!exit) continue;
      pending.delete(i);
      const runner = runners[i]!;
      if (!runnerCompleted(exit.code) && !(stoppedAt !== undefined && isStopExit(exit))) {
        const { logTail } = await runner.collect();
        const why = `runner ${i} failed (${exit.reason ?? describeExit(exit.code, exit.signal)})${logTail ? `: ${k6ErrorLine(logTail).slice(0, 300)}` : ''}`;
        runnerFailures.set(i, why);
        failures.push(why);
        stopAll(why);
      } else if (exit.code === K6_EXIT.thresholdsHaveFailed && pending.size > 0 && stoppedAt === undefined) {
        const { logTail } = await runner.collect();
        if (logTail.includes(ABORT_ON_FAIL_LOG)) {
          const why = `runner ${i} crossed a threshold with abortOnFail on its slice`;
          failures.push(`test aborted: ${why}`);
          stopAll(why);
        }
      }
    }
    const now = Date.now();
    if (stoppedAt === undefined && now > deadline) {
      const why = `deadline exceeded: still running ${options.graceS ?? 120} s after the test's totalDuration of ${options.preflight.totalDurationS} s`;
      failures.push(why);
      stopAll(why);
    }
    if (stoppedAt !== undefined && now - stoppedAt > stopTimeoutMs) {
      for (const i of pending) {
        log.warn(`runner ${i} did not stop within ${stopTimeoutMs / 1000} s; killing it`);
        await runners[i]!.kill();
      }
    }
    if (now >= nextProgress && pending.size > 0) {
      nextProgress = now + progressMs;
      await progress(runners, pending, contains, live, startedAtMs, log);
    }
  }
  return { failures, runnerFailures, endedAtMs: Date.now(), contains };
}

/** A runner that exited because we stopped it (REST stop, signal, kill). */
function isStopExit(exit: RunnerExit): boolean {
  return (
    exit.code === K6_EXIT.scriptStoppedFromRESTAPI ||
    exit.code === K6_EXIT.externalAbort ||
    exit.code === null
  );
}

/** Live totals across runners; a runner that ended keeps its last counts. */
interface LiveTotals {
  at: number;
  requests: number;
  perRunner: Map<number, { requests: number; failedRequests: number; iterations: number }>;
}

/** Logs one progress line: aggregate RPS since the last line, VUs, errors, from every runner's `/v1/metrics`. */
async function progress(
  runners: Runner[],
  pending: Set<number>,
  contains: Record<string, MetricContains>,
  totals: LiveTotals,
  startedAtMs: number,
  log: Logger,
): Promise<void> {
  const polled = await Promise.all(
    runners
      .filter((r) => pending.has(r.index))
      .map(async (r) => ({ index: r.index, metrics: await r.api.metrics().catch((): K6LiveMetric[] => []) })),
  );
  let vus = 0;
  for (const { index, metrics } of polled) {
    // A runner that is ending may answer with nothing: it keeps its last counts.
    if (metrics.length === 0) continue;
    const find = (name: string) => metrics.find((m) => m.name === name)?.sample;
    const requests = find('http_reqs')?.count ?? 0;
    vus += find('vus')?.value ?? 0;
    totals.perRunner.set(index, {
      requests,
      failedRequests: (find('http_req_failed')?.rate ?? 0) * requests,
      iterations: find('iterations')?.count ?? 0,
    });
    for (const m of metrics) contains[m.name.split('{')[0]!] = m.contains;
  }
  const all = [...totals.perRunner.values()];
  const requests = all.reduce((a, r) => a + r.requests, 0);
  const failedRequests = all.reduce((a, r) => a + r.failedRequests, 0);
  const iterations = all.reduce((a, r) => a + r.iterations, 0);
  const now = Date.now();
  const rps = (requests - totals.requests) / Math.max((now - totals.at) / 1000, 1e-3);
  totals.at = now;
  totals.requests = requests;
  const elapsed = Math.round((now - startedAtMs) / 1000);
  log.info(
    `t=${elapsed}s runners=${pending.size}/${runners.length} VUs=${vus} RPS=${rps.toFixed(0)} requests=${requests} ` +
      `errors=${requests > 0 ? ((100 * failedRequests) / requests).toFixed(2) : '0.00'}% iterations=${iterations}`,
  );
}

function buildResult(input: {
  options: RunOptions;
  runners: Runner[];
  exits: Array<RunnerExit | undefined>;
  collected: Array<{ summary?: string; logTail: string; node?: string }>;
  start: StartInfo;
  monitor: MonitorInfo;
}): RunResult {
  const { options, runners, exits, collected, start, monitor } = input;
  const failures = [...monitor.failures];
  const summaries: Array<RunnerSummary | undefined> = collected.map((c, i) => {
    if (c.summary === undefined) {
      failures.push(`runner ${i} left no summary; its results are missing from the aggregate`);
      return undefined;
    }
    try {
      return parseRunnerSummary(c.summary);
    } catch (error) {
      failures.push(`runner ${i}'s summary could not be read: ${errorMessage(error)}`);
      return undefined;
    }
  });
  const present = summaries.filter((s): s is RunnerSummary => s !== undefined);
  // The window: from the first runner's start to the end of the last runner's own test run.
  const ends = summaries.map((s, i) =>
    s?.durationS === undefined ? undefined : start.offsetsMs[i]! / 1000 + s.durationS,
  );
  const known = ends.filter((e): e is number => e !== undefined);
  const durationS = known.length > 0 ? Math.max(...known) : (monitor.endedAtMs - start.startedAtMs) / 1000;
  const metrics = aggregateSummaries(present, {
    durationS,
    percentiles: thresholdPercentiles(options.preflight.thresholds),
    contains: monitor.contains,
  });
  const thresholds = evaluateThresholds(options.preflight.thresholds, metrics);
  const thresholdsOk = thresholds.every((t) => t.ok);
  const crossed = thresholds.filter((t) => !t.ok);
  if (crossed.length > 0) {
    failures.unshift(
      `thresholds crossed on the aggregate: ${crossed.map((t) => `${t.metric} ${t.expression}`).join('; ')}`,
    );
  }
  const runnerResults: RunnerResult[] = runners.map((r, i) => {
    const exit = exits[i] ?? { code: null };
    const s = summaries[i];
    const failure = monitor.runnerFailures.get(i);
    const requests = s?.metrics.http_reqs;
    const duration = s?.metrics.http_req_duration;
    const iterations = s?.metrics.iterations;
    const result: RunnerResult = {
      index: r.index,
      segment: options.plan.runners[i]!.segment,
      exitCode: exit.code,
      exit: exit.reason ?? describeExit(exit.code, exit.signal),
      ok: failure === undefined && s !== undefined,
      startOffsetMs: start.offsetsMs[i]!,
    };
    if (s?.durationS !== undefined) result.durationS = s.durationS;
    if (requests?.type === 'counter') {
      result.requests = requests.count;
      if (s?.durationS) result.rps = requests.count / s.durationS;
    }
    if (duration?.type === 'trend' && duration.count > 0) {
      result.p95Ms = duration.grid.points.find(([p]) => Math.abs(p - 0.95) < 1e-9)?.[1] ?? duration.max;
    }
    if (iterations?.type === 'counter') result.iterations = iterations.count;
    if (collected[i]!.node) result.node = collected[i]!.node!;
    if (!result.ok) result.logTail = collected[i]!.logTail;
    return result;
  });
  return {
    schema: RESULT_SCHEMA,
    verdict: failures.length === 0 ? 'passed' : 'failed',
    failures,
    thresholdsOk,
    script: options.script,
    environment: {
      backend: options.backend.name,
      k6Version: options.preflight.k6Version,
      runners: runners.length,
      scriptHash: options.preflight.scriptHash,
      ...options.environment,
    },
    startedAt: new Date(start.startedAtMs).toISOString(),
    endedAt: new Date(monitor.endedAtMs).toISOString(),
    durationS,
    startSkewMs: start.skewMs,
    metrics,
    rootGroup: mergeGroups(present.map((s) => s.rootGroup)),
    thresholds,
    runners: runnerResults,
  };
}
