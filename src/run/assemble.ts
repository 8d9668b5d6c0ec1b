import type { Backend } from '../backends/backend.ts';
import type { Failure } from '../errors.ts';
import { hasArrivalRate } from '../k6/executors.ts';
import { K6_EXIT, k6ExitCodeOfRunners } from '../k6/exit-codes.ts';
import { K6_METRIC } from '../k6/metrics.ts';
import { bandedTrends, evaluateThresholds, thresholdPercentiles } from '../k6/thresholds.ts';
import type { RunnerExit, RunPlan } from '../plan.ts';
import { aggregateSummaries, mergeGroups } from '../result/aggregate.ts';
import { buildResult, summaryData } from '../result/build.ts';
import { loadGeneratorHealth } from '../result/health.ts';
import type { MetricContains, RunEnvironment, RunResult } from '../result/schema.ts';
import type { Timeline } from '../result/timeline-schema.ts';
import { zoneResults } from '../result/zones.ts';
import type { Collected } from './collect.ts';
import type { LaunchedRunners } from './launch.ts';
import type { Preflight } from './preflight.ts';
import type { StartInfo } from './start.ts';
import type { VusSample } from './status-poll.ts';

/** What the run was asked to do (the parts of `RunOptions` the result records). */
export interface RunAsked {
  script: string;
  preflight: Preflight;
  plan: RunPlan;
  backend: Pick<Backend, 'name'>;
  environment?: Partial<RunEnvironment>;
}

/** What the stages before the result learnt, for {@link assembleResult}. */
export interface RunParts {
  launched: LaunchedRunners;
  start: StartInfo;
  /** Epoch ms at which the last runner's test ended (or the run ended before any start). */
  endedAtMs: number;
  /** The test's duration in s, setup() and teardown() included, as k6 counts it. */
  durationS: number;
  /** What setup() returned (`{data}`), when it returned something. */
  setupData?: { data: unknown };
  /** The code `k6 run` exits with after a failed setup() or teardown() (100, 101, 107). */
  lifecycleK6ExitCode?: number;
  /** Why the run failed while it ran (monitor, setup, teardown), in order. */
  failures: readonly Failure[];
  /** What each live metric contains (the monitor's reading of the REST API). */
  contains: Record<string, MetricContains>;
  /** The whole test's `vus` gauge, sampled while it ran. */
  vusSamples: readonly VusSample[];
  collected: Collected;
  timeline?: Timeline;
  /** CPU time each runner used during its test, in s (undefined where not read); absent when none was. */
  cpuSeconds?: ReadonlyArray<number | undefined>;
}

/**
 * Aggregate, thresholds and result stages: merges the runners' summaries (src/result/aggregate.ts),
 * judges the script's thresholds on the aggregate (src/k6/thresholds.ts) and builds the result
 * (src/result/build.ts), with k6's exit code where `k6 run` would have exited with one of its own.
 */
export function assembleResult(options: RunAsked, parts: RunParts): RunResult {
  const { preflight: pre, plan } = options;
  const { launched, collected, start, durationS } = parts;
  const present = collected.summaries.filter((s) => s !== undefined);
  const aggregateOptions = {
    durationS,
    percentiles: thresholdPercentiles(pre.thresholds),
    // What the runners' REST API said wins; the script's declarations cover what it never listed.
    contains: { ...pre.declaredContains, ...parts.contains },
    sampledGauges: { [K6_METRIC.vus]: parts.vusSamples.map((s) => s.vus) },
    bands: bandedTrends(pre.thresholds),
  };
  const metrics = aggregateSummaries(present, aggregateOptions);
  // Judged before the summary data is made: it carries each metric's thresholds.
  const thresholds = evaluateThresholds(pre.thresholds, metrics);
  const rootGroup = mergeGroups(present.map((s) => s.rootGroup));
  const result = buildResult({
    script: options.script,
    environment: {
      backend: options.backend.name,
      k6Version: pre.k6Version,
      runners: launched.runners.length,
      scriptHash: pre.scriptHash,
      ...options.environment,
    },
    startedAtMs: start.startedAtMs,
    endedAtMs: parts.endedAtMs,
    durationS,
    startSkewMs: start.skewMs,
    ...k6ExitCodeOf(parts.lifecycleK6ExitCode, launched.exits, parts.failures),
    metrics,
    ...(parts.timeline ? { timeline: parts.timeline } : {}),
    rootGroup,
    summary: summaryData({
      metrics,
      summaries: present,
      rootGroup,
      options: pre.options,
      durationS,
      noColor: pre.noColor ?? false,
      isStdOutTTY: process.stdout.isTTY === true,
      isStdErrTTY: process.stderr.isTTY === true,
      ...(parts.setupData ? { setupData: parts.setupData.data } : {}),
    }),
    thresholds,
    loadGenerator: loadGeneratorHealth(
      launched.runners.map((_, i) => ({
        summary: collected.summaries[i],
        insufficientVUs: collected.leftovers[i]!.insufficientVUs,
        cpuSeconds: parts.cpuSeconds?.[i],
        durationS: collected.summaries[i]?.durationS ?? durationS,
      })),
      hasArrivalRate(pre.options.scenarios),
    ),
    failures: [...parts.failures, ...collected.failures],
    runners: launched.runners.map((_, i) => ({
      segment: plan.runners[i]!.segment,
      exit: launched.exits[i],
      summary: collected.summaries[i],
      startOffsetMs: start.offsetsMs[i] ?? 0,
      logTail: collected.leftovers[i]!.logTail,
      ...(collected.leftovers[i]!.node ? { node: collected.leftovers[i]!.node } : {}),
    })),
  });
  if (plan.zones) withZones(result, plan, collected, aggregateOptions, parts.failures);
  return result;
}

/**
 * Adds each runner's zone and the per-zone breakdown ({@link zoneResults}) to a run with zones,
 * and one failure (kind `runner`) per zone whose runners did not all complete, naming the zone, so
 * that a zone that failed (an unreachable API server, evicted runners) is named in the verdict.
 * The verdict stays the whole run's (thresholds judged on the global aggregate).
 */
function withZones(
  result: RunResult,
  plan: RunPlan,
  collected: Collected,
  options: Parameters<typeof aggregateSummaries>[1],
  failures: readonly Failure[],
): void {
  result.runners.forEach((r, i) => {
    const zone = plan.runners[i]?.zone;
    if (zone !== undefined) r.zone = zone;
  });
  result.zones = zoneResults(
    plan.zones ?? [],
    result.runners.map((r, i) => ({
      plan: plan.runners[i]!,
      summary: collected.summaries[i],
      startOffsetMs: r.startOffsetMs ?? 0,
      ok: r.ok,
    })),
    options,
  );
  const late = new Set(failures.flatMap((f) => (f.kind === 'deadline' ? (f.runners ?? []) : [])));
  for (const zone of result.zones) {
    const failed = zone.runners.filter((i) => !result.runners[i]?.ok);
    const slow = zone.runners.filter((i) => late.has(i) && !failed.includes(i));
    if (failed.length === 0 && slow.length === 0) continue;
    const lines = [
      ...(failed.length > 0
        ? [
            `${failed.length} of ${zone.runners.length} runners did not complete (runner ${failed.join(', ')})`,
          ]
        : []),
      ...(slow.length > 0
        ? [`runner ${slow.join(', ')} still testing at the deadline (was its cluster reachable?)`]
        : []),
    ];
    result.failures.push(`zone "${zone.name}": ${lines.join('; ')}; the other zones' data is kept`);
    result.failureKinds?.push(failed.length > 0 ? 'runner' : 'deadline');
    result.verdict = 'failed';
  }
}

/**
 * The exit code `k6 run` of the whole test would have given where it is k6's own, in k6's order
 * (k6 `internal/cmd/run.go`): a setup() or teardown() failure (107, 100, 101) first; then a
 * runner's own code (108, 107, 110, 100, 101: {@link k6ExitCodeOfRunners}); then 99 when a
 * threshold with `abortOnFail` aborted the test (kind `aborted`) and nothing else failed while it
 * ran, as k6 exits after such an abort.
 * @returns `{k6ExitCode}`, or `{}` when none applies.
 */
function k6ExitCodeOf(
  lifecycleCode: number | undefined,
  exits: ReadonlyArray<RunnerExit | undefined>,
  failures: readonly Failure[],
): { k6ExitCode?: number } {
  const code =
    lifecycleCode ??
    k6ExitCodeOfRunners(exits.map((e) => e?.code ?? null)) ??
    (failures.some((f) => f.kind === 'aborted') && failures.every((f) => f.kind === 'aborted')
      ? K6_EXIT.thresholdsHaveFailed
      : undefined);
  return code === undefined ? {} : { k6ExitCode: code };
}
