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

import { z } from 'zod';
import { TimelineSchema } from './timeline-schema.ts';
import { zoneResultSchema } from './zone-schema.ts';

/** The format tag written in `schema`; bumped on any incompatible change. */
export const RESULT_SCHEMA = 'k6-distributed/result@1';

/*
 * One definition: each type below is inferred from its schema, and `runResultSchema` checks a
 * result JSON read from outside this process (src/result/read-result.ts). Objects are loose:
 * fields a newer writer adds are kept as they are.
 */

/** k6 metric types (https://grafana.com/docs/k6/latest/using-k6/metrics/). */
export const metricTypeSchema = z.enum(['counter', 'gauge', 'rate', 'trend']);
export type MetricType = z.infer<typeof metricTypeSchema>;

/** What a metric's values measure, as in handleSummary: `time` (ms), `data` (bytes) or `default`. */
export const metricContainsSchema = z.enum(['time', 'data', 'default']);
export type MetricContains = z.infer<typeof metricContainsSchema>;

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
export const thresholdOutcomeSchema = z.looseObject({
  /** `true` when the threshold passed on the aggregate. */
  ok: z.boolean(),
  /** The aggregated value the expression was judged on (absent when there were no samples). */
  observed: z.number().optional(),
});
export type ThresholdOutcome = z.infer<typeof thresholdOutcomeSchema>;

/** One metric or submetric (`name{tag:value}`) of the global result. */
export const metricResultSchema = z.looseObject({
  type: metricTypeSchema,
  contains: metricContainsSchema,
  /**
   * Counts (`count`, `passes`, `fails`) and `rate` are never negative, and a rate metric's `rate`
   * is a fraction (k6 counters only grow; a result claiming otherwise is refused, so a forged
   * baseline or bundle cannot be judged "better").
   */
  values: z.record(z.string(), z.number()).superRefine((values, ctx) => {
    for (const key of ['count', 'passes', 'fails', 'rate']) {
      const v = values[key];
      if (v !== undefined && v < 0)
        ctx.addIssue({ code: 'custom', path: [key], message: 'must not be negative' });
    }
  }),
  /**
   * Trends only: for each percentile a threshold judges (`p(95)`), the merge's uncertainty band
   * `[low, high]` in the trend's unit: the merged values at p − 0.02 and p + 0.02 points, the
   * rank error the merge is held to (quantiles.ts, `npm run bench:percentiles`).
   */
  percentileBands: z.record(z.string(), z.tuple([z.number(), z.number()])).optional(),
  /** Keyed by the threshold expression source, e.g. `"p(95)<500"`. */
  thresholds: z.record(z.string(), thresholdOutcomeSchema).optional(),
});
export type MetricResult = z.infer<typeof metricResultSchema>;

/** A check's totals across every runner (handleSummary `root_group.checks[]`). */
export const checkResultSchema = z.looseObject({
  name: z.string(),
  /** `::group::check`, as k6 writes it. */
  path: z.string(),
  passes: z.number().min(0, { error: 'must not be negative' }),
  fails: z.number().min(0, { error: 'must not be negative' }),
});
export type CheckResult = z.infer<typeof checkResultSchema>;

/** A group and its nested groups and checks (handleSummary `root_group`). */
export interface GroupResult {
  name: string;
  path: string;
  groups: GroupResult[];
  checks: CheckResult[];
}
/** Recursive, so its type is written once above and the schema is checked against it. */
export const groupResultSchema: z.ZodType<GroupResult> = z.lazy(() =>
  z.object({
    name: z.string(),
    path: z.string(),
    groups: z.array(groupResultSchema),
    checks: z.array(checkResultSchema),
  }),
);

/** One threshold row for reports: the script's own expression judged on the aggregate. */
export const thresholdRowSchema = z.looseObject({
  /** The metric key as the script wrote it, e.g. `http_req_duration{scenario:api}`. */
  metric: z.string(),
  /** The expression, e.g. `p(95)<500`. */
  expression: z.string(),
  ok: z.boolean(),
  /** The aggregated value judged, in the metric's unit (ms for time trends); absent when no samples. */
  observed: z.number().optional(),
  abortOnFail: z.boolean(),
  /**
   * Set when the limit lies inside the merge's uncertainty band for that percentile
   * (`MetricResult.percentileBands`): the verdict could go either way on the raw samples.
   */
  uncertain: z.literal(true).optional(),
  /** The band `[low, high]` in the metric's unit (ms for time trends), set with `uncertain`. */
  band: z.tuple([z.number(), z.number()]).optional(),
});
export type ThresholdRow = z.infer<typeof thresholdRowSchema>;

/** How a runner ended, from its k6 exit code (k6 `errext/exitcodes/codes.go`). */
export const runnerResultSchema = z.looseObject({
  /** 0-based runner index. */
  index: z.number(),
  /** The k6 execution segment it ran, e.g. `1/4:2/4`. */
  segment: z.string(),
  /** The process or container exit code; `null` when it never exited by itself (killed). */
  exitCode: z.number().nullable(),
  /** A short explanation of the exit code or of the failure. */
  exit: z.string(),
  /** `true` when the runner completed its segment. */
  ok: z.boolean(),
  /** When the runner reported running, relative to the first runner to do so, in ms. */
  startOffsetMs: z.number().optional(),
  /** Its own test run duration from its summary, in s. */
  durationS: z.number().optional(),
  /** `http_reqs` count of this runner. */
  requests: z.number().optional(),
  /** `http_reqs` per second over its own duration. */
  rps: z.number().optional(),
  /** Its own p(95) of `http_req_duration`, in ms (shown per runner only; never averaged). */
  p95Ms: z.number().optional(),
  /** `iterations` count of this runner. */
  iterations: z.number().optional(),
  /** The Kubernetes node the runner's Pod ran on (Kubernetes backend). */
  node: z.string().optional(),
  /** The load zone it ran in (a run with zones). */
  zone: z.string().optional(),
  /** The last lines of the runner's log when it failed. */
  logTail: z.string().optional(),
});
export type RunnerResult = z.infer<typeof runnerResultSchema>;

/** What ran, to decide whether two results can be compared (baseline vs head). */
export const runEnvironmentSchema = z.looseObject({
  backend: z.enum(['local', 'kubernetes']),
  k6Version: z.string(),
  runners: z.number(),
  /** Container image of the runners (Kubernetes backend). */
  runnerImage: z.string().optional(),
  /** Kubernetes resources of each runner, as given. */
  resources: z.record(z.string(), z.unknown()).optional(),
  nodeSelector: z.record(z.string(), z.string()).optional(),
  /** sha256 of the k6 archive's script content, hex. */
  scriptHash: z.string(),
});
export type RunEnvironment = z.infer<typeof runEnvironmentSchema>;

/** Overall verdict: thresholds on the aggregate, and whether every runner completed. */
export const verdictSchema = z.enum(['passed', 'failed']);
export type Verdict = z.infer<typeof verdictSchema>;

/**
 * Every kind of failure a run can end with (src/errors.ts explains each and maps them to exit
 * codes); the result's `failureKinds` holds them.
 */
export const FAILURE_KINDS = [
  'interrupted',
  'configuration',
  'start',
  'runner',
  'deadline',
  'incomplete',
  'aborted',
  'marked-failed',
  'thresholds',
] as const;

/** One of {@link FAILURE_KINDS}. */
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** A group in handleSummary's shape: `root_group`, with `id` (md5 of the path) as k6 gives it. */
export interface SummaryGroup {
  name: string;
  path: string;
  id: string;
  groups: SummaryGroup[];
  checks: Array<CheckResult & { id: string }>;
}
const summaryGroupSchema: z.ZodType<SummaryGroup> = z.lazy(() =>
  z.looseObject({
    name: z.string(),
    path: z.string(),
    id: z.string(),
    groups: z.array(summaryGroupSchema),
    checks: z.array(checkResultSchema.extend({ id: z.string() })),
  }),
);

/**
 * The drop-in `data` argument of k6's `handleSummary(data)` for the whole test
 * (https://grafana.com/docs/k6/latest/results-output/end-of-test/custom-summary/), checked
 * field by field against what k6 v2.2.0 passes: `root_group` with `groups` and `checks` as arrays
 * (the legacy `--summary-export` has objects), `options`, `state`, `setup_data` and `metrics`
 * whose trends carry exactly the script's `summaryTrendStats` (computed from the runners' merged
 * quantile grids) and whose `thresholds` are `{expression: {ok}}`. The user's `handleSummary` is
 * called once with it after the run (src/k6/handle-summary.ts); tools that read k6's data
 * (jslib-summary `textSummary`, `k6-html-reporter`) read it as it is.
 */
export const summaryDataSchema = z.looseObject({
  root_group: summaryGroupSchema,
  options: z.looseObject({
    /** The script's `summaryTrendStats` (k6's default `avg,min,med,max,p(90),p(95)` when unset). */
    summaryTrendStats: z.array(z.string()),
    /** The script's `summaryTimeUnit`, `''` when unset. */
    summaryTimeUnit: z.string(),
    /** `--no-color` or `NO_COLOR` given. */
    noColor: z.boolean(),
  }),
  state: z.looseObject({
    /** Whether this process's stdout is a terminal (the handleSummary k6 process sets its own). */
    isStdOutTTY: z.boolean(),
    isStdErrTTY: z.boolean(),
    /** The test's wall-clock window, in ms. */
    testRunDurationMs: z.number(),
  }),
  /** What `setup()` returned, once for the whole test; absent when the run has no setup data. */
  setup_data: z.unknown().optional(),
  metrics: z.record(
    z.string(),
    z.looseObject({
      type: metricTypeSchema,
      contains: metricContainsSchema,
      values: z.record(z.string(), z.number()),
      thresholds: z.record(z.string(), z.looseObject({ ok: z.boolean() })).optional(),
    }),
  ),
});
export type SummaryData = z.infer<typeof summaryDataSchema>;

/** The global result of one distributed run. */
export const runResultSchema = z.looseObject({
  schema: z.literal(RESULT_SCHEMA),
  verdict: verdictSchema,
  /** One line per reason the verdict is `failed` (thresholds crossed, runner failures, interruption). */
  failures: z.array(z.string()),
  /** The kind of each reason the verdict is `failed`; absent in results written before kinds. */
  failureKinds: z.array(z.enum(FAILURE_KINDS)).optional(),
  /**
   * The exit code a plain `k6 run` of the whole test would have given, where it is k6's own (k6
   * `errext/exitcodes`, in k6's order): 107 when the one `teardown()` threw, 101 when it passed
   * `teardownTimeout`; else a runner's 108, 107, 110, 100 or 101; else 99 when a threshold with
   * `abortOnFail` aborted the test. Absent otherwise.
   */
  k6ExitCode: z.number().optional(),
  /** `true` when every threshold passed on the aggregate (independent of runner failures). */
  thresholdsOk: z.boolean(),
  /** The script as given (path). */
  script: z.string(),
  environment: runEnvironmentSchema,
  /** ISO 8601 time the synchronised start was sent to every runner (no runner ran before it). */
  startedAt: z.string(),
  /** ISO 8601 time the last runner ended. */
  endedAt: z.string(),
  /** The wall-clock window the rates are computed over, in s. */
  durationS: z.number(),
  /** Spread of the moments the runners reported running, in ms. */
  startSkewMs: z.number(),
  /** Global metrics and submetrics, keyed by k6 name (`http_req_duration{expected_response:true}`). */
  metrics: z.record(z.string(), metricResultSchema),
  rootGroup: groupResultSchema,
  /**
   * The drop-in `handleSummary(data)` object of the whole test ({@link summaryDataSchema}); absent
   * in results written before it. `metrics` above keeps every percentile of the merge, this one
   * only the script's `summaryTrendStats`, as k6 gives them.
   */
  summary: summaryDataSchema.optional(),
  thresholds: z.array(thresholdRowSchema),
  runners: z.array(runnerResultSchema),
  /**
   * The run over time, polled from the runners' REST APIs while it ran (RPS, active VUs, error
   * rate, checks failed, the band of the runners' p95), one point per interval (5 s by default);
   * its shape and units are documented at `TimelineSchema` in src/result/timeline-schema.ts. Absent in
   * results written before it existed.
   */
  timeline: TimelineSchema.optional(),
  /**
   * The id of this run, also the value of the `k6d_run` tag on every sample the runners emit
   * (`RUN_TAG` in src/run/plan.ts), so outputs such as Prometheus remote write separate runs;
   * absent in results written before it.
   */
  runId: z.string().optional(),
  /**
   * Whether the runners held the test back: the verdict and one line per reason here, every figure
   * in the full shape of `loadGeneratorSchema` (src/result/load-generator-schema.ts); absent in older results.
   */
  loadGenerator: z.looseObject({ saturated: z.boolean(), reasons: z.array(z.string()) }).optional(),
  /**
   * How sure each headline figure is: a confidence interval for RPS, p50/p90/p95/p99, the error
   * rate and the check rate, estimated from the run itself; the level here, the full shape in
   * `uncertaintySchema` (src/result/uncertainty-schema.ts); absent in older results.
   */
  uncertainty: z.looseObject({ level: z.number() }).optional(),
  /**
   * Per load zone, in the zones' order: its runners' figures merged (`zoneResultSchema` in
   * src/result/zone-schema.ts); absent for a run without zones. The verdict is the whole run's.
   */
  zones: z.array(zoneResultSchema).optional(),
});
/** The global result of one distributed run (fields this version does not name are kept when read). */
export type RunResult = z.infer<typeof runResultSchema>;
