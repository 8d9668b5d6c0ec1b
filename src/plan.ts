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
  /** The load zone it runs in (the value of {@link ZONE_TAG} on its samples); none without zones. */
  zone?: string;
  /**
   * Its index in the whole run's plan, when this plan is one zone's part of it (a backend of one
   * zone numbers its runners from 0): the value of {@link RUNNER_TAG} and of `{runner}`.
   */
  runIndex?: number;
}

/** One load zone of a run: its name, its share of the test in percent, its runners (RunPlan.zones). */
export interface ZonePlan {
  name: string;
  /** Percent of the whole test (every scenario), more than 0; the zones' shares add up to 100. */
  share: number;
  /** How many runners it has; its runners are consecutive in the plan, in the zones' order. */
  runners: number;
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
  /** The load zones, in the runners' order; absent for a run without zones. */
  zones?: ZonePlan[];
  /** One line each: what the plan changed from what was asked (fewer runners than asked). */
  warnings: string[];
  /**
   * The user's `-e NAME=value` values, by name: backends give them to every runner in its
   * environment (read with `--include-system-env-vars`), never on its command line.
   */
  env: Record<string, string>;
  /**
   * Where each runner pushes its per-interval histograms (k6's `experimental-prometheus-rw`
   * output with native histograms, see {@link intervalMetricsEnv}); absent: no such output is added.
   */
  intervalMetrics?: IntervalMetricsPlan;
}

/** The receiver of the runners' per-interval histograms. */
export interface IntervalMetricsPlan {
  /** Base URL of the receiver; runner `i` posts to `<url>/<i>`. */
  url: string;
  /** How often each runner pushes, ms (k6 `K6_PROMETHEUS_RW_PUSH_INTERVAL`). */
  pushIntervalMs: number;
  /**
   * The tracked metric keys besides `http_req_duration{expected_response:true}` (the thresholds'),
   * for a receiver that keeps only those (Kubernetes: the runner Pod's interval receiver).
   */
  metrics?: string[];
}

/** The output that carries the per-interval histograms (k6 v2.2.0 `cmd/builtin_output_gen.go`). */
export const REMOTE_WRITE_OUTPUT = 'experimental-prometheus-rw';

/**
 * The environment that points runner `index`'s `experimental-prometheus-rw` output at the
 * receiver: k6 reads this output's options from the environment only (k6 v2.2.0
 * `output/prometheusrw/remotewrite/config.go`: its `--out` argument is ignored). Trends become
 * native histograms (bucket factor 1.1) through k6's `native-histograms` feature, added to the
 * runner's `K6_FEATURES` (comma-separated, k6 `internal/features/resolve.go`; the legacy
 * `K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM` works too but warns in every runner's log). A
 * `--features` flag of the user's wins over the environment in k6: then no histograms come, and the
 * result has no per-interval latency. No stale markers (one request less at the end). Empty
 * without {@link RunPlan.intervalMetrics}.
 * @param features the `K6_FEATURES` the runner would have otherwise (the user's), if any.
 */
export function intervalMetricsEnv(plan: RunPlan, index: number, features?: string): Record<string, string> {
  const rw = plan.intervalMetrics;
  if (!rw) return {};
  return {
    K6_PROMETHEUS_RW_SERVER_URL: `${rw.url}/${index}`,
    K6_PROMETHEUS_RW_PUSH_INTERVAL: `${rw.pushIntervalMs}ms`,
    K6_FEATURES: [features, 'native-histograms'].filter(Boolean).join(','),
    K6_PROMETHEUS_RW_STALE_MARKERS: 'false',
  };
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
 * The tag every runner of a run with load zones adds to its samples: its zone's name, so that a
 * threshold can name a zone (`http_req_duration{k6d_zone:eu-west}`) and outputs separate zones.
 * Named, like {@link RUNNER_TAG}, so that it cannot collide with a script's own tags; the
 * preflight refuses a script that sets it.
 */
export const ZONE_TAG = 'k6d_zone';

/** How a runner ended. */
export interface RunnerExit {
  /** The k6 exit code; `null` when the runner was killed or never started. */
  code: number | null;
  /** The signal that ended the process, or a platform reason such as `OOMKilled`. */
  signal?: string | null;
  /** Why the runner could not run at all (spawn error, image pull error, …). */
  reason?: string;
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
  const index = String(runner.runIndex ?? runner.index);
  const ours = {
    ...(plan.runId ? { [RUN_TAG]: plan.runId } : {}),
    [RUNNER_TAG]: index,
    ...(runner.zone === undefined ? {} : { [ZONE_TAG]: runner.zone }),
  };
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
    // An extra output beside the user's own (`--out` adds up in k6): the per-interval histograms.
    ...(plan.intervalMetrics ? ['--out', REMOTE_WRITE_OUTPUT] : []),
    // Explicit, so that K6_SUMMARY_MODE=disabled in the environment cannot stop the export.
    '--summary-mode',
    'compact',
    '--no-usage-report',
    // The environment reaches the script as in a plain `k6 run script.js` (the `-e` values are in it).
    '--include-system-env-vars',
    '--quiet',
    '--no-color',
    ...plan.userRunArgs.map((arg) => arg.replaceAll('{runner}', index)),
    paths.archive,
  ];
}
