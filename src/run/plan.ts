import { randomBytes } from 'node:crypto';
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
 * all of them can be started at once, and with `--no-setup --no-teardown --linger`, so that the
 * orchestrator runs `setup()` and `teardown()` once, through one runner's REST API (setup.ts,
 * teardown.ts), and ends every runner's linger itself once teardown is done.
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
  /**
   * Tags for every sample, from the script's `options.tags` and the user's `--tag`;
   * {@link RUNNER_TAG} is added per runner, and {@link RUN_TAG} when `runId` is set.
   */
  tags: Record<string, string>;
  /** The run's id, the value of {@link RUN_TAG} on every runner's samples. */
  runId?: string;
  /** One line each: what the plan changed from what was asked (fewer runners than asked). */
  warnings: string[];
  /**
   * The user's `-e NAME=value` values, by name: backends give them to every runner in its
   * environment (read with `--include-system-env-vars`), never on its command line.
   */
  env: Record<string, string>;
}

/**
 * The tag every runner adds to its samples (its 0-based index), so outputs such as `--out` can
 * tell runners apart. Named so that it cannot collide with a script's own tags (a script's
 * `runner: 'ci-linux-1'` stays the script's); the preflight refuses a script that sets it.
 */
export const RUNNER_TAG = 'k6d_runner';

/**
 * The tag every runner adds to its samples with the run's id (the result's `runId`), so that a
 * dashboard fed by `--out experimental-prometheus-rw` (or any other output) separates runs: in
 * Prometheus it is the label `k6d_run`. Named, like {@link RUNNER_TAG}, so that it cannot collide
 * with a script's own tags (k6's own `testid` convention is left to the script); the preflight
 * refuses a script that sets it.
 */
export const RUN_TAG = 'k6d_run';

/**
 * A new run id: lowercase, starts with a letter, unique enough for names, labels and tags,
 * e.g. `rmhx3k2a1b2c3` (`r`, the epoch ms in base 36, 6 random hex digits).
 */
export function newRunId(): string {
  return `r${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
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
  // min, the percentiles and max in a row: a runner's packed summary is then its CDF's knots as
  // they are (compactSummary in k6/summary.ts), with nothing to copy for 1,000 runners.
  return ['count', 'avg', 'med', 'min', ...percents.map(percentileKey), 'max'].join(',');
}

/**
 * Plans N runners.
 * @param maxVUs the test's maximum VUs from `k6 inspect --execution-requirements`. A runner whose
 *   segment gets no VU would do nothing (and k6 v2.2.0's end-of-test summary crashes on such a
 *   runner, so it leaves no summary), so at most maxVUs runners are planned: asking more runs
 *   maxVUs runners, with a warning, and gives the answer of one `k6 run` all the same.
 * @throws ConfigurationError when `runners` is not a whole number of at least 1.
 */
export function planRun(options: {
  runners: number;
  maxVUs: number;
  extraPercentiles?: readonly number[];
  userRunArgs?: string[];
  tags?: Record<string, string>;
  env?: Record<string, string>;
  /** The run's id for {@link RUN_TAG}; without it the runners' samples carry no run tag. */
  runId?: string;
}): RunPlan {
  const { runners: n, maxVUs } = options;
  if (!Number.isInteger(n) || n < 1) {
    throw new ConfigurationError(`runners: must be a whole number of at least 1, got ${n}`);
  }
  const planned = Math.max(1, Math.min(n, maxVUs));
  const warnings =
    planned < n
      ? [
          `runners: ${n} asked, but the test has at most ${maxVUs} VU${maxVUs === 1 ? '' : 's'} at once; running ${planned} runner${planned === 1 ? '' : 's'} (a runner without a VU would do nothing)`,
        ]
      : [];
  const userRunArgs = options.userRunArgs ?? [];
  if (planned > 1) checkFileOutputs(userRunArgs);
  return {
    runners: executionSegments(planned).map((segment, index) => ({ index, segment })),
    sequence: executionSegmentSequence(planned),
    trendStats: summaryTrendStats(options.extraPercentiles),
    userRunArgs,
    tags: options.tags ?? {},
    ...(options.runId ? { runId: options.runId } : {}),
    warnings,
    env: options.env ?? {},
  };
}

/** k6 outputs that write a local file (`--out json=path`, `--out csv=path`). */
const FILE_OUTPUTS = new Set(['json', 'csv']);

/**
 * Refuses a file output without `{runner}` in its path: every runner would write the same file and
 * the last one would win (a plain `k6 run` writes one file with every sample).
 * @throws ConfigurationError naming the flag as given.
 */
function checkFileOutputs(args: readonly string[]): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let value: string | undefined;
    if (arg === '--out' || arg === '-o') value = args[++i];
    else if (arg.startsWith('--out=') || arg.startsWith('-o=')) value = arg.slice(arg.indexOf('=') + 1);
    if (value === undefined) continue;
    const [kind, target] = [value.split('=')[0]!, value.slice(value.indexOf('=') + 1)];
    if (FILE_OUTPUTS.has(kind) && value.includes('=') && !target.includes('{runner}')) {
      const dot = target.lastIndexOf('.');
      const suggestion =
        dot > 0 ? `${target.slice(0, dot)}-{runner}${target.slice(dot)}` : `${target}-{runner}`;
      throw new ConfigurationError(
        `k6 args: --out ${value}: every runner would write the same file; put {runner} in the path (one file per runner), e.g. --out ${kind}=${suggestion}`,
      );
    }
  }
}

/**
 * The k6 options every runner gets in its environment (beside `K6D_RUNNER_INDEX` and the others):
 * `K6_SUMMARY_TREND_STATS` is the quantile grid ({@link summaryTrendStats}, about 5,000 characters),
 * in the environment rather than as `--summary-trend-stats` to keep the runner's command line short
 * (k6 reads the option from either, `cmd/options.go`; a flag would win, and the preflight refuses
 * that flag in the k6 args).
 */
export function runnerEnv(plan: RunPlan): Record<string, string> {
  return { K6_SUMMARY_TREND_STATS: plan.trendStats };
}

/**
 * The arguments of `k6 run` for one runner (after the binary), with the archive last.
 * @param paths.address host:port the runner's REST API listens on.
 * @param paths.summary where the runner writes its `--summary-export` JSON (a fallback the backend
 *   can read when the compact summary is missing); none when the backend could not read it.
 */
export function runnerArgs(
  plan: RunPlan,
  runner: RunnerPlan,
  paths: { archive: string; summary?: string; address: string },
): string[] {
  const ours = { ...(plan.runId ? { [RUN_TAG]: plan.runId } : {}), [RUNNER_TAG]: String(runner.index) };
  const tags = Object.entries({ ...plan.tags, ...ours }).flatMap(([k, v]) => ['--tag', `${k}=${v}`]);
  return [
    'run',
    '--paused',
    '--address',
    paths.address,
    // setup() and teardown() run once, on one runner, through the REST API; --linger keeps every
    // runner's REST API up after its test ended, until the orchestrator ends it (SIGTERM).
    '--no-setup',
    '--no-teardown',
    '--linger',
    '--execution-segment',
    runner.segment,
    '--execution-segment-sequence',
    plan.sequence,
    ...tags,
    ...(paths.summary === undefined ? [] : ['--summary-export', paths.summary]),
    // Explicit, so that K6_SUMMARY_MODE=disabled in the environment cannot stop the export.
    '--summary-mode',
    'compact',
    '--no-usage-report',
    // The environment reaches the script as in a plain `k6 run script.js` (the `-e` values are in it).
    '--include-system-env-vars',
    '--quiet',
    '--no-color',
    ...plan.userRunArgs.map((arg) => arg.replaceAll('{runner}', String(runner.index))),
    paths.archive,
  ];
}
