/**
 * The global result of a distributed run: the JSON document that the CLI and the `run` action
 * write, and that the `report` action reads. Its `metrics` follow the shape of the `data.metrics`
 * argument of k6's `handleSummary()` (https://grafana.com/docs/k6/latest/results-output/end-of-test/custom-summary/),
 * so tools that read a k6 summary read this one too; `rootGroup` follows `data.root_group`.
 *
 * Units: durations of trends that k6 marks as time (`contains: "time"`) are milliseconds; data
 * counters are bytes; `rate` of a counter is per second over the run's wall-clock window; `rate` of
 * a rate metric is a fraction in [0, 1]; timestamps are ISO 8601 strings; `*Ms` fields are ms and
 * `*S` fields are seconds.
 */

/** The format tag written in `schema`; bumped on any incompatible change. */
export const RESULT_SCHEMA = 'k6-distributed/result@1';

/** k6 metric types (https://grafana.com/docs/k6/latest/using-k6/metrics/). */
export type MetricType = 'counter' | 'gauge' | 'rate' | 'trend';

/** What a metric's values measure, as in handleSummary: `time` (ms), `data` (bytes) or `default`. */
export type MetricContains = 'time' | 'data' | 'default';

/**
 * Values of one metric, keyed as k6 keys them:
 * - counter: `count`, `rate` (per second over the run's window);
 * - gauge: `value`, `min`, `max`;
 * - rate: `rate` (fraction), `passes`, `fails`;
 * - trend: `count`, `min`, `max`, `avg`, `med` and `p(N)` for the reported percentiles
 *   (merged from the runners' quantile grids, never averaged).
 */
export type MetricValues = Record<string, number>;

/** One threshold expression's global outcome, as in handleSummary's `thresholds` (plus what we observed). */
export interface ThresholdOutcome {
  /** `true` when the threshold passed on the aggregate. */
  ok: boolean;
  /** The aggregated value the expression was judged on (`undefined` when there were no samples). */
  observed?: number;
}

/** One metric or submetric (`name{tag:value}`) of the global result. */
export interface MetricResult {
  type: MetricType;
  contains: MetricContains;
  values: MetricValues;
  /**
   * Trends only: for each percentile a threshold judges (`p(95)`), the merge's uncertainty band
   * `[low, high]` in the trend's unit: the merged values at p − 0.02 and p + 0.02 points, the
   * rank error the merge is held to (quantiles.ts, `npm run bench:percentiles`).
   */
  percentileBands?: Record<string, [number, number]>;
  /** Keyed by the threshold expression source, e.g. `"p(95)<500"`. */
  thresholds?: Record<string, ThresholdOutcome>;
}

/** A check's totals across every runner (handleSummary `root_group.checks[]`). */
export interface CheckResult {
  name: string;
  /** `::group::check`, as k6 writes it. */
  path: string;
  passes: number;
  fails: number;
}

/** A group and its nested groups and checks (handleSummary `root_group`). */
export interface GroupResult {
  name: string;
  path: string;
  groups: GroupResult[];
  checks: CheckResult[];
}

/** One threshold row for reports: the script's own expression judged on the aggregate. */
export interface ThresholdRow {
  /** The metric key as the script wrote it, e.g. `http_req_duration{scenario:api}`. */
  metric: string;
  /** The expression, e.g. `p(95)<500`. */
  expression: string;
  ok: boolean;
  /** The aggregated value judged, in the metric's unit (ms for time trends); absent when no samples. */
  observed?: number;
  abortOnFail: boolean;
  /**
   * Set when the limit lies inside the merge's uncertainty band for that percentile
   * (`MetricResult.percentileBands`): the verdict could go either way on the raw samples.
   */
  uncertain?: true;
  /** The band `[low, high]` in the metric's unit (ms for time trends), set with `uncertain`. */
  band?: [number, number];
}

/** How a runner ended, from its k6 exit code (k6 `errext/exitcodes/codes.go`). */
export interface RunnerResult {
  /** 0-based runner index. */
  index: number;
  /** The k6 execution segment it ran, e.g. `1/4:2/4`. */
  segment: string;
  /** The process or container exit code; `null` when it never exited by itself (killed). */
  exitCode: number | null;
  /** A short explanation of the exit code or of the failure. */
  exit: string;
  /** `true` when the runner completed its segment. */
  ok: boolean;
  /** When the runner reported running, relative to the first runner to do so, in ms. */
  startOffsetMs?: number;
  /** Its own test run duration from its summary, in s. */
  durationS?: number;
  /** `http_reqs` count of this runner. */
  requests?: number;
  /** `http_reqs` per second over its own duration. */
  rps?: number;
  /** Its own p(95) of `http_req_duration`, in ms (shown per runner only; never averaged). */
  p95Ms?: number;
  /** `iterations` count of this runner. */
  iterations?: number;
  /** The Kubernetes node the runner's Pod ran on (Kubernetes backend). */
  node?: string;
  /** The last lines of the runner's log when it failed. */
  logTail?: string;
}

/** What ran, to decide whether two results can be compared (baseline vs head). */
export interface RunEnvironment {
  backend: 'local' | 'kubernetes';
  k6Version: string;
  runners: number;
  /** Container image of the runners (Kubernetes backend). */
  runnerImage?: string;
  /** Kubernetes resources of each runner, as given. */
  resources?: Record<string, unknown>;
  nodeSelector?: Record<string, string>;
  /** sha256 of the k6 archive's script content, hex. */
  scriptHash: string;
}

/** Overall verdict: thresholds on the aggregate, and whether every runner completed. */
export type Verdict = 'passed' | 'failed';

/** The global result of one distributed run. */
export interface RunResult {
  schema: typeof RESULT_SCHEMA;
  verdict: Verdict;
  /** One line per reason the verdict is `failed` (thresholds crossed, runner failures, interruption). */
  failures: string[];
  /** `true` when every threshold passed on the aggregate (independent of runner failures). */
  thresholdsOk: boolean;
  /** The script as given (path). */
  script: string;
  environment: RunEnvironment;
  /** ISO 8601 time the synchronised start was sent to every runner (no runner ran before it). */
  startedAt: string;
  /** ISO 8601 time the last runner ended. */
  endedAt: string;
  /** The wall-clock window the rates are computed over, in s. */
  durationS: number;
  /** Spread of the moments the runners reported running, in ms. */
  startSkewMs: number;
  /** Global metrics and submetrics, keyed by k6 name (`http_req_duration{expected_response:true}`). */
  metrics: Record<string, MetricResult>;
  rootGroup: GroupResult;
  thresholds: ThresholdRow[];
  runners: RunnerResult[];
}
