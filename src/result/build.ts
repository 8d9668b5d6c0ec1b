import type { RunnerExit } from '../backends/backend.ts';
import type { Failure } from '../errors.ts';
import { describeExit } from '../k6/exit-codes.ts';
import { K6_METRIC } from '../k6/metrics.ts';
import type { RunnerSummary } from '../k6/summary.ts';
import {
  type GroupResult,
  type MetricResult,
  RESULT_SCHEMA,
  type RunEnvironment,
  type RunnerResult,
  type RunResult,
  type ThresholdRow,
} from './result.ts';

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
  /** When it confirmed its start, in ms after the first runner. */
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
  metrics: Record<string, MetricResult>;
  rootGroup: GroupResult;
  thresholds: ThresholdRow[];
  /** Why the run failed besides crossed thresholds (runner failures, interruption, missing summaries), in order. */
  failures: readonly Failure[];
  runners: readonly RunnerOutcome[];
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
    thresholdsOk: crossed.length === 0,
    script: parts.script,
    environment: parts.environment,
    startedAt: new Date(parts.startedAtMs).toISOString(),
    endedAt: new Date(parts.endedAtMs).toISOString(),
    durationS: parts.durationS,
    startSkewMs: parts.startSkewMs,
    metrics: parts.metrics,
    rootGroup: parts.rootGroup,
    thresholds: parts.thresholds,
    runners: parts.runners.map((outcome, index) =>
      runnerResult(
        index,
        outcome,
        failures.some((f) => f.kind === 'runner' && f.runner === index),
      ),
    ),
  };
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
    result.p95Ms = duration.grid.points.find(([p]) => Math.abs(p - 0.95) < 1e-9)?.[1] ?? duration.max;
  }
  if (iterations?.type === 'counter') result.iterations = iterations.count;
  if (outcome.node) result.node = outcome.node;
  if (!result.ok) result.logTail = outcome.logTail;
  return result;
}
