import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { ConfigurationError } from '../errors.ts';
import { executionSegmentSequence, executionSegments } from '../k6/executors.ts';
import { percentileKey } from '../k6/thresholds-parser.ts';
import { zoneSegments } from '../k6/zone-segments.ts';
import { RUN_TAG, type RunnerPlan, type RunPlan, type ZonePlan } from '../plan.ts';
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
  // they are (compactSummary in k6/compact-summary.ts, read by k6/compact-summary-read.ts), with nothing to copy for 1,000 runners.
  return ['count', 'avg', 'med', 'min', ...percents.map(percentileKey), 'max'].join(',');
}

/**
 * Plans N runners.
 * @param maxVUs the test's maximum VUs from `k6 inspect --execution-requirements`. A runner whose
 *   segment gets no VU would do nothing (and k6 v2.2.0's end-of-test summary crashes on such a
 *   runner, so it leaves no summary), so at most maxVUs runners are planned: asking more runs
 *   maxVUs runners, with a warning, and gives the answer of one `k6 run` all the same.
 * With `zones`, each zone gets its share of every scenario over its own runners
 * (k6/zone-segments.ts) and `runners` is ignored: the zones' runner counts add up to the plan's;
 * the zones' inputs were checked (src/inputs/zones.ts), and a runner count above maxVUs is kept (a
 * zone's share may need each of its runners).
 * @throws ConfigurationError when `runners` is not a whole number of at least 1, or the zones'
 *   shares do not add up to 100.
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
  /** The load zones, in order; without them every runner gets 1/N of the test. */
  zones?: readonly ZonePlan[];
}): RunPlan {
  if (options.zones && options.zones.length > 0) return planZones(options, options.zones);
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
  if (planned > 1) checkFileOutputs(userRunArgs, planned);
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

/** {@link planRun} with load zones: consecutive runners per zone, segments by share. */
function planZones(options: Parameters<typeof planRun>[0], zones: readonly ZonePlan[]): RunPlan {
  let split: ReturnType<typeof zoneSegments>;
  try {
    split = zoneSegments(zones);
  } catch (error) {
    throw new ConfigurationError(`zones: ${(error as Error).message}`);
  }
  const runners: RunnerPlan[] = split.segments.flatMap((segments, z) =>
    segments.map((segment) => ({ index: 0, segment, zone: zones[z]!.name })),
  );
  runners.forEach((r, i) => {
    r.index = i;
  });
  const userRunArgs = options.userRunArgs ?? [];
  if (runners.length > 1) checkFileOutputs(userRunArgs, runners.length);
  return {
    runners,
    sequence: split.sequence,
    trendStats: summaryTrendStats(options.extraPercentiles),
    userRunArgs,
    tags: options.tags ?? {},
    ...(options.runId ? { runId: options.runId } : {}),
    zones: zones.map((z) => ({ ...z })),
    warnings:
      runners.length > options.maxVUs
        ? [
            `zones: ${runners.length} runners over the zones, but the test has at most ${options.maxVUs} VU${options.maxVUs === 1 ? '' : 's'} at once: some runners get no VU and do nothing`,
          ]
        : [],
    env: options.env ?? {},
  };
}

/** k6 outputs that write a local file (`--out json=path`, `--out csv=path`). */
const FILE_OUTPUTS = new Set(['json', 'csv']);

/** One `--out json=…`/`csv=…` of the user's k6 flags: the value as given and the file it names. */
interface FileOutput {
  /** `json=raw-{runner}.json`. */
  value: string;
  kind: string;
  /** `raw-{runner}.json`. */
  target: string;
}

/** The file outputs among k6 `run` flags (`--out json=a.json`, `-o csv=b.csv`, `--out=json=c.json`). */
function fileOutputs(args: readonly string[]): FileOutput[] {
  const out: FileOutput[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let value: string | undefined;
    if (arg === '--out' || arg === '-o') value = args[++i];
    else if (arg.startsWith('--out=') || arg.startsWith('-o=')) value = arg.slice(arg.indexOf('=') + 1);
    const kind = value?.split('=')[0] ?? '';
    if (value?.includes('=') && FILE_OUTPUTS.has(kind))
      out.push({ value, kind, target: value.slice(value.indexOf('=') + 1) });
  }
  return out;
}

/**
 * Whether a path names an existing character device, FIFO or socket (`/dev/stdout` on a terminal, a
 * pipe or a socket): one stream, which N runners cannot share.
 */
function isStream(target: string): boolean {
  const info = statSync(target, { throwIfNoEntry: false });
  return info !== undefined && (info.isCharacterDevice() || info.isFIFO() || info.isSocket());
}

/**
 * Refuses a file output without `{runner}` in its path: every runner would write the same file and
 * the last one would win (a plain `k6 run` writes one file with every sample). A device or FIFO
 * (`/dev/stdout`) is one stream that N runners cannot share: the suggestion is a file per runner.
 * @throws ConfigurationError naming the flag as given.
 */
function checkFileOutputs(args: readonly string[], runners: number): void {
  for (const { value, kind, target } of fileOutputs(args)) {
    if (target.includes('{runner}')) continue;
    if (isStream(target)) {
      throw new ConfigurationError(
        `k6 args: --out ${value}: ${target} is one stream, which ${runners} runners cannot share; write one file per runner, e.g. --out ${kind}=raw-{runner}.${kind}`,
      );
    }
    const dot = target.lastIndexOf('.');
    const suggestion =
      dot > 0 ? `${target.slice(0, dot)}-{runner}${target.slice(dot)}` : `${target}-{runner}`;
    throw new ConfigurationError(
      `k6 args: --out ${value}: every runner would write the same file; put {runner} in the path (one file per runner), e.g. --out ${kind}=${suggestion}`,
    );
  }
}

/**
 * The files k6's own outputs (`--out json=…`, `csv=…`) write on this machine, one per runner of
 * the plan (`{runner}` replaced by its index), named as the user gave them for errors
 * (`k6 args: --out json=raw-{runner}.json`), streams left out: the local backend checks them with the result's
 * (src/inputs/output-paths.ts), so that k6's raw samples and the result cannot overwrite each other.
 */
export function k6FileOutputs(plan: RunPlan): Array<{ input: string; path: string }> {
  const outputs = fileOutputs(plan.userRunArgs);
  const paths = plan.runners.flatMap((r) =>
    outputs.map((o) => ({
      input: `k6 args: --out ${o.value}`,
      path: o.target.replaceAll('{runner}', String(r.index)),
    })),
  );
  // A stream (one runner's `/dev/stdout`) is the runner's own, not this process's: not checked here.
  return paths.filter((p, i) => paths.findIndex((q) => q.path === p.path) === i && !isStream(p.path));
}
