import { ConfigurationError } from '../errors.ts';
import { percentileKey } from '../k6/thresholds.ts';
import { percentsAround, QUANTILE_GRID } from '../result/quantiles.ts';

/**
 * The plan of a distributed run: what every runner executes. Backends turn it into processes or
 * Pods; nothing here knows how runners are started.
 *
 * k6 rules it follows (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#execution-segment):
 * runner i of N runs `--execution-segment i/N:(i+1)/N` and every runner gets the same full
 * `--execution-segment-sequence 0,1/N,…,1`, so that VUs and iterations split exactly and the parts
 * add up to the whole test. Runners start `--paused` with their REST API on `--address`, so that
 * all of them can be started at once.
 */

/** One runner of the plan. */
export interface RunnerPlan {
  /** 0-based. */
  index: number;
  /** k6 execution segment, e.g. `1/4:2/4`. */
  segment: string;
}

/** What every runner shares. */
export interface RunPlan {
  runners: RunnerPlan[];
  /** The full execution segment sequence, e.g. `0,1/4,2/4,3/4,1`. */
  sequence: string;
  /** The `--summary-trend-stats` list every runner reports (count, min, max, avg, med, dense p(N)). */
  trendStats: string;
  /**
   * Flags for `k6 run` that the user gave and that only `k6 run` accepts (e.g. `--out`); `{runner}`
   * in them becomes the runner's index, so that `--out json=raw-{runner}.json` gives one file each.
   */
  userRunArgs: string[];
  /** Tags for every sample, from the script's `options.tags` and the user's `--tag`; `runner` is added per runner. */
  tags: Record<string, string>;
}

/** Execution segments `0:1/N`, `1/N:2/N`, …, `(N-1)/N:1`. */
export function executionSegments(n: number): string[] {
  const at = (i: number) => (i === 0 ? '0' : i === n ? '1' : `${i}/${n}`);
  return Array.from({ length: n }, (_, i) => `${at(i)}:${at(i + 1)}`);
}

/** The sequence `0,1/N,…,(N-1)/N,1` (k6 `--execution-segment-sequence`). */
export function executionSegmentSequence(n: number): string {
  return ['0', ...Array.from({ length: n - 1 }, (_, i) => `${i + 1}/${n}`), '1'].join(',');
}

/**
 * The trend stats every runner reports: exact count/min/max/avg/med and the quantile grid,
 * plus any percentile the thresholds or the report need that is not on the grid.
 */
export function summaryTrendStats(extraPercentiles: readonly number[] = []): string {
  const percents = [...new Set([...QUANTILE_GRID, ...extraPercentiles.flatMap(percentsAround)])].sort(
    (a, b) => a - b,
  );
  return ['count', 'min', 'max', 'avg', 'med', ...percents.map(percentileKey)].join(',');
}

/**
 * Plans N runners.
 * @param maxVUs the test's maximum VUs from `k6 inspect --execution-requirements`: each runner
 *   needs at least one VU, so N may not exceed it.
 * @throws ConfigurationError when `runners` is not a whole number from 1 to maxVUs.
 */
export function planRun(options: {
  runners: number;
  maxVUs: number;
  extraPercentiles?: readonly number[];
  userRunArgs?: string[];
  tags?: Record<string, string>;
}): RunPlan {
  const { runners: n, maxVUs } = options;
  if (!Number.isInteger(n) || n < 1) {
    throw new ConfigurationError(`runners: must be a whole number of at least 1, got ${n}`);
  }
  if (n > maxVUs) {
    throw new ConfigurationError(
      `runners: ${n} runners for a test of at most ${maxVUs} VUs would leave runners without a VU; use at most ${maxVUs} runners or raise the VUs`,
    );
  }
  return {
    runners: executionSegments(n).map((segment, index) => ({ index, segment })),
    sequence: executionSegmentSequence(n),
    trendStats: summaryTrendStats(options.extraPercentiles),
    userRunArgs: options.userRunArgs ?? [],
    tags: options.tags ?? {},
  };
}

/**
 * The arguments of `k6 run` for one runner (after the binary), with the archive last.
 * @param address host:port the runner's REST API listens on.
 * @param summaryPath where the runner writes its `--summary-export` JSON.
 */
export function runnerArgs(
  plan: RunPlan,
  runner: RunnerPlan,
  paths: { archive: string; summary: string; address: string },
): string[] {
  const tags = Object.entries({ ...plan.tags, runner: String(runner.index) }).flatMap(([k, v]) => [
    '--tag',
    `${k}=${v}`,
  ]);
  return [
    'run',
    '--paused',
    '--address',
    paths.address,
    '--execution-segment',
    runner.segment,
    '--execution-segment-sequence',
    plan.sequence,
    ...tags,
    '--summary-trend-stats',
    plan.trendStats,
    '--summary-export',
    paths.summary,
    '--no-usage-report',
    '--quiet',
    '--no-color',
    ...plan.userRunArgs.map((arg) => arg.replaceAll('{runner}', String(runner.index))),
    paths.archive,
  ];
}
