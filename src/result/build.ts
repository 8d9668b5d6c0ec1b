import { createHash } from 'node:crypto';
import type { Failure } from '../errors.ts';
import { describeExit } from '../k6/exit-codes.ts';
import { parseGoFloat } from '../k6/go-syntax.ts';
import { K6_METRIC } from '../k6/metrics.ts';
import type { RunnerSummary } from '../k6/summary.ts';
import type { RunnerExit } from '../plan.ts';
import type { LoadGenerator } from './load-generator-schema.ts';
import { gridValueAt, mergePercentiles } from './quantiles.ts';
import {
  type GroupResult,
  type MetricResult,
  RESULT_SCHEMA,
  type RunEnvironment,
  type RunnerResult,
  type RunResult,
  type SummaryData,
  type SummaryGroup,
  type ThresholdRow,
} from './schema.ts';
import type { Timeline } from './timeline-schema.ts';
import { estimateUncertainty, type RunnerTrend } from './uncertainty.ts';

/**
 * The test's wall-clock window, in s: from the first runner's start to the end of the last
 * runner's own test run (its start offset plus its summary's duration); when no runner reported a
 * duration, from the start to the moment the last runner ended.
 * @param offsetsMs per runner, when it confirmed its start, in ms after the first one.
 * @param fallbackS the start-to-end window measured by the orchestrator, in s.
 */
export function testWindowS(
  summaries: ReadonlyArray<RunnerSummary | undefined>,
  offsetsMs: readonly number[],
  fallbackS: number,
): number {
  const ends = summaries.flatMap((s, i) =>
    s?.durationS === undefined ? [] : [offsetsMs[i]! / 1000 + s.durationS],
  );
  return ends.length > 0 ? Math.max(...ends) : fallbackS;
}

/** What one runner was and left, for its row of the result. */
export interface RunnerOutcome {
  /** The k6 execution segment it ran, e.g. `1/4:2/4`. */
  segment: string;
  /** How it ended; `undefined` when it never did (counted as killed). */
  exit: RunnerExit | undefined;
  summary: RunnerSummary | undefined;
  /** When it started (its confirmation, or its un-pause on its node), in ms after the first runner. */
  startOffsetMs: number;
  logTail: string;
  node?: string;
}

/** Everything {@link buildResult} puts together. */
export interface ResultParts {
  script: string;
  environment: RunEnvironment;
  startedAtMs: number;
  endedAtMs: number;
  durationS: number;
  startSkewMs: number;
  /** The exit code `k6 run` would have given where it is k6's own (see `RunResult.k6ExitCode`). */
  k6ExitCode?: number;
  metrics: Record<string, MetricResult>;
  rootGroup: GroupResult;
  thresholds: ThresholdRow[];
  /** The run over time (see src/result/timeseries.ts); absent when nothing was polled. */
  timeline?: Timeline;
  /** The drop-in handleSummary data object ({@link summaryData}); absent when not made. */
  summary?: SummaryData;
  /** Why the run failed besides crossed thresholds (runner failures, interruption, missing summaries), in order. */
  failures: readonly Failure[];
  runners: readonly RunnerOutcome[];
  /** The load generator's health (src/result/health.ts); absent when not assessed. */
  loadGenerator?: LoadGenerator;
}

/**
 * Result stage: the global result. Crossed thresholds come first among the failures (kind
 * `thresholds`); the verdict is `passed` only when there is no failure at all. A runner is `ok`
 * when it has no `runner` failure and left a summary.
 */
export function buildResult(parts: ResultParts): RunResult {
  const crossed = parts.thresholds.filter((t) => !t.ok);
  const failures: Failure[] = [
    ...(crossed.length > 0
      ? [
          {
            kind: 'thresholds' as const,
            message: `thresholds crossed on the aggregate: ${crossed.map((t) => `${t.metric} ${t.expression}`).join('; ')}`,
          },
        ]
      : []),
    ...parts.failures,
  ];
  return {
    schema: RESULT_SCHEMA,
    verdict: failures.length === 0 ? 'passed' : 'failed',
    failures: failures.map((f) => f.message),
    failureKinds: failures.map((f) => f.kind),
    ...(parts.k6ExitCode === undefined ? {} : { k6ExitCode: parts.k6ExitCode }),
    thresholdsOk: crossed.length === 0,
    script: parts.script,
    environment: parts.environment,
    startedAt: new Date(parts.startedAtMs).toISOString(),
    endedAt: new Date(parts.endedAtMs).toISOString(),
    durationS: parts.durationS,
    startSkewMs: parts.startSkewMs,
    metrics: parts.metrics,
    rootGroup: parts.rootGroup,
    ...(parts.summary ? { summary: parts.summary } : {}),
    thresholds: parts.thresholds,
    runners: parts.runners.map((outcome, index) =>
      runnerResult(
        index,
        outcome,
        failures.some((f) => f.kind === 'runner' && f.runner === index),
      ),
    ),
    ...(parts.timeline ? { timeline: parts.timeline } : {}),
    ...(parts.loadGenerator ? { loadGenerator: parts.loadGenerator } : {}),
    uncertainty: estimateUncertainty({
      metrics: parts.metrics,
      latency: runnerTrends(parts.runners),
      ...(parts.timeline ? { points: parts.timeline.points } : {}),
    }),
  };
}

/** The runners' latency trends (all requests, and expected responses) for the uncertainty. */
function runnerTrends(runners: readonly RunnerOutcome[]): Record<string, RunnerTrend[]> {
  const out: Record<string, RunnerTrend[]> = {};
  for (const key of [K6_METRIC.httpReqDuration, K6_METRIC.httpReqDurationExpected]) {
    const trends = runners.flatMap(({ summary }) => {
      const m = summary?.metrics[key];
      return m?.type === 'trend' && m.count > 0 ? [{ count: m.count, avg: m.avg, grid: m.grid }] : [];
    });
    if (trends.length > 0) out[key] = trends;
  }
  return out;
}

/** One runner's row: how it ended, and its own requests, RPS, p(95) and iterations from its summary. */
function runnerResult(index: number, outcome: RunnerOutcome, failed: boolean): RunnerResult {
  const exit = outcome.exit ?? { code: null };
  const s = outcome.summary;
  const requests = s?.metrics[K6_METRIC.httpReqs];
  const duration = s?.metrics[K6_METRIC.httpReqDuration];
  const iterations = s?.metrics[K6_METRIC.iterations];
  const result: RunnerResult = {
    index,
    segment: outcome.segment,
    exitCode: exit.code,
    exit: exit.reason ?? describeExit(exit.code, exit.signal),
    ok: !failed && s !== undefined,
    startOffsetMs: outcome.startOffsetMs,
  };
  if (s?.durationS !== undefined) result.durationS = s.durationS;
  if (requests?.type === 'counter') {
    result.requests = requests.count;
    if (s?.durationS) result.rps = requests.count / s.durationS;
  }
  if (duration?.type === 'trend' && duration.count > 0) {
    result.p95Ms = gridValueAt(duration.grid, 0.95) ?? duration.max;
  }
  if (iterations?.type === 'counter') result.iterations = iterations.count;
  if (outcome.node) result.node = outcome.node;
  if (!result.ok) result.logTail = outcome.logTail;
  return result;
}

/** k6's `summaryTrendStats` when the script sets none (k6 `lib/options.go`). */
export const DEFAULT_SUMMARY_TREND_STATS: readonly string[] = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'];

/** What {@link summaryData} is made of. */
export interface SummaryDataParts {
  /** The global metrics, thresholds already judged (`evaluateThresholds` writes them in). */
  metrics: Record<string, MetricResult>;
  /** The runners' summaries, for a `p(N)` of `summaryTrendStats` the global metrics lack. */
  summaries: readonly RunnerSummary[];
  rootGroup: GroupResult;
  /** The consolidated options as `k6 inspect` printed them (`summaryTrendStats`, `summaryTimeUnit`). */
  options: Record<string, unknown>;
  /** The test's wall-clock window, in s. */
  durationS: number;
  /** `--no-color` given to k6, or `NO_COLOR` set. */
  noColor: boolean;
  /** Whether the process that reports has a terminal on stdout / stderr. */
  isStdOutTTY: boolean;
  isStdErrTTY: boolean;
  /**
   * What `setup()` returned (the `POST /v1/setup` answer's `data.attributes.data`). The hook for
   * setup-once: the stage that runs `setup()` once hands its data here; without it (no setup run
   * by the orchestrator, or a script without `setup()`) `setup_data` is left out, as k6 leaves it
   * out when there is no setup data.
   */
  setupData?: unknown;
}

/**
 * The drop-in `data` object of k6's `handleSummary(data)` for the whole test (shape:
 * `summaryDataSchema` in result.ts, checked against k6 v2.2.0). Trends carry exactly the
 * script's `summaryTrendStats` (`avg`, `min`, `med`, `max`, `count`, `p(N)`): from the global
 * metrics where they are there, else a `p(N)` merged from the runners' quantile grids (quantiles.ts),
 * never averaged. Other types carry k6's values (counter `count`/`rate`, rate `rate`/`passes`/`fails`,
 * gauge `value`/`min`/`max`). Thresholds are `{expression: {ok}}`. Groups and checks get k6's `id`
 * (the md5 of their path, k6 `lib/models.go`).
 */
export function summaryData(parts: SummaryDataParts): SummaryData {
  const stats = trendStats(parts.options.summaryTrendStats);
  const metrics: SummaryData['metrics'] = {};
  for (const [name, metric] of Object.entries(parts.metrics)) {
    const values =
      metric.type === 'trend'
        ? trendValues(name, metric.values, stats, parts.summaries)
        : pick(metric.values, VALUE_KEYS[metric.type]);
    metrics[name] = {
      type: metric.type,
      contains: metric.contains,
      values,
      ...(metric.thresholds
        ? {
            thresholds: Object.fromEntries(
              Object.entries(metric.thresholds).map(([expr, t]) => [expr, { ok: t.ok }]),
            ),
          }
        : {}),
    };
  }
  const unit = parts.options.summaryTimeUnit;
  return {
    root_group: summaryGroup(parts.rootGroup),
    options: {
      summaryTrendStats: stats,
      summaryTimeUnit: typeof unit === 'string' ? unit : '',
      noColor: parts.noColor,
    },
    state: {
      isStdOutTTY: parts.isStdOutTTY,
      isStdErrTTY: parts.isStdErrTTY,
      testRunDurationMs: parts.durationS * 1000,
    },
    ...(parts.setupData === undefined ? {} : { setup_data: parts.setupData }),
    metrics,
  };
}

/** The values k6 gives each non-trend type in handleSummary. */
const VALUE_KEYS = {
  counter: ['count', 'rate'],
  rate: ['rate', 'passes', 'fails'],
  gauge: ['value', 'min', 'max'],
  trend: [],
} as const;

function trendStats(raw: unknown): string[] {
  return Array.isArray(raw) && raw.length > 0 ? raw.map(String) : [...DEFAULT_SUMMARY_TREND_STATS];
}

function pick(values: Record<string, number>, keys: readonly string[]): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [k, values[k] ?? 0]));
}

/** The percent of a `p(N)` stat (`p(99.9)` -> 99.9), else undefined. */
function statPercent(stat: string): number | undefined {
  const m = /^p\((.*)\)$/.exec(stat);
  const percent = m ? parseGoFloat(m[1]!) : undefined;
  return percent !== undefined && percent >= 0 && percent <= 100 ? percent : undefined;
}

function trendValues(
  name: string,
  global: Record<string, number>,
  stats: readonly string[],
  summaries: readonly RunnerSummary[],
): Record<string, number> {
  const out: Record<string, number> = {};
  const missing: Array<[string, number]> = [];
  for (const stat of stats) {
    const percent = statPercent(stat);
    if (stat in global) out[stat] = global[stat]!;
    else if (percent === 0) out[stat] = global.min ?? 0;
    else if (percent === 100) out[stat] = global.max ?? 0;
    else if (percent !== undefined) missing.push([stat, percent]);
    else out[stat] = 0;
  }
  if (missing.length > 0) {
    const grids = summaries.flatMap((s) => {
      const m = s.metrics[name];
      return m?.type === 'trend' && m.count > 0 ? [m.grid] : [];
    });
    const merged = mergePercentiles(
      grids,
      missing.map(([, p]) => p),
    );
    missing.forEach(([stat], i) => {
      out[stat] = merged[i]!;
    });
  }
  return out;
}

/** `root_group` as handleSummary has it: arrays, and k6's `id` (md5 of the path) on groups and checks. */
function summaryGroup(group: GroupResult): SummaryGroup {
  return {
    name: group.name,
    path: group.path,
    id: md5(group.path),
    groups: group.groups.map(summaryGroup),
    checks: group.checks.map((c) => ({ ...c, id: md5(c.path) })),
  };
}

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}
