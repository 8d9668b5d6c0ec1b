import { randomBytes } from 'node:crypto';
import { ConfigurationError } from '../errors.ts';
import { executionSegmentSequence, executionSegments } from '../k6/executors.ts';
import { percentileKey } from '../k6/thresholds-parser.ts';
import { RUN_TAG, type RunPlan } from '../plan.ts';
import { percentsAround, QUANTILE_GRID } from '../result/quantile-grid.ts';

/**
 * A new run id: lowercase, starts with a letter, unique enough for names, labels and tags,
 * e.g. `rmhx3k2a1b2c3` (`r`, the epoch ms in base 36, 6 random hex digits).
 */
export function newRunId(): string {
  return `r${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
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
  // they are (compactSummary in k6/compact-summary.ts, read by k6/summary.ts), with nothing to copy for 1,000 runners.
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
