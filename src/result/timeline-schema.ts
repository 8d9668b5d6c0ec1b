/**
 * The run over time in the result (`RunResult.timeline`): its schema and types. A leaf: it imports
 * nothing of ours, and src/result/schema.ts embeds it.
 */

import { z } from 'zod';

/**
 * The run over time: one global time series recorded by the orchestrator while the test runs,
 * from the same `GET /v1/metrics` polls that feed the progress line (plus, optionally, one
 * `GET /v1/groups` per runner for check counts): O(1) requests per runner per interval.
 *
 * Kept in the result JSON (field `timeline`) in the shape of {@link TimelineSchema}. Units are in
 * the names: `tS`/`intervalS` seconds, `rps` requests per second, `errorRate` a fraction in [0, 1],
 * `*Ms` milliseconds, counts are plain integers.
 *
 * What k6 gives live, and what follows from it (k6 v2.2.0 `metrics/sink.go`, `api/v1/metric_routes.go`):
 * - counters are `{count, rate}` since the start: interval values are differences between polls;
 * - rates are `{rate}` only (a fraction since the start; `passes`/`fails` when a caller has them):
 *   failed requests are `rate × http_reqs.count`, since `http_req_failed` gets one sample per request;
 * - trends are `{min, max, avg, med, p(90), p(95)}` over every sample since the start, never a window:
 *   so the interval's mean latency is exact (sum = avg × count, differenced), but p95 is not: the
 *   series keeps the runners' p95 since the start as a band `p95MinMs`..`p95MaxMs`. The global p95
 *   since the start always lies inside it (a mixture's quantile lies between its components'), and
 *   it is exact (`p95Ms`) while only one runner has requests;
 * - checks: the `checks` rate has no counts; `GET /v1/groups` lists every check's `passes`/`fails`
 *   (k6 `api/v1/group.go`), see `checkTotalsFromGroups` in k6/rest.ts.
 */

/** The format tag written in {@link Timeline.schema}; bumped on any incompatible change. */
export const TIMELINE_SCHEMA = 'k6-distributed/timeline@1';

/** One interval of the run, across every runner. */
export const TimelinePointSchema = z.object({
  /** End of the interval, seconds since the synchronised start. */
  tS: z.number().nonnegative(),
  /** Length of the interval this point covers, s (about the series' `intervalS`; the last one may be shorter). */
  intervalS: z.number().positive(),
  /** HTTP requests completed in the interval. */
  requests: z.number().int().nonnegative(),
  /** `requests / intervalS`, requests per second. */
  rps: z.number().nonnegative(),
  /** Active VUs at the end of the interval (sum over the runners still running). */
  vus: z.number().int().nonnegative(),
  /** Failed requests (`http_req_failed`) / requests in the interval, a fraction 0–1 (0 without requests). */
  errorRate: z.number().min(0).max(1),
  /** Checks that failed in the interval; absent when no runner reported check counts. */
  checksFailed: z.number().int().nonnegative().optional(),
  /** Mean `http_req_duration` of the interval's requests, ms (exact); absent without requests. */
  avgMs: z.number().nonnegative().optional(),
  /** Lowest runner p95 of `http_req_duration` since the start, ms; absent before the first request. */
  p95MinMs: z.number().nonnegative().optional(),
  /** Highest runner p95 of `http_req_duration` since the start, ms; absent before the first request. */
  p95MaxMs: z.number().nonnegative().optional(),
  /** The global p95 since the start, ms, when it is exact (only one runner had requests so far). */
  p95Ms: z.number().nonnegative().optional(),
  /** Runners whose metrics were read for this point (a runner that ended or did not answer keeps its last counts). */
  runners: z.number().int().nonnegative(),
});

/** One interval of the run: see {@link TimelinePointSchema} for each field's unit. */
export type TimelinePoint = z.infer<typeof TimelinePointSchema>;

/**
 * One interval of a per-interval latency series. Values are in the series' `unit`; the
 * percentiles are k6's (rank `q × (count − 1)`, linear between samples) over the samples whose
 * push landed in the interval, a bucket's samples spread evenly over it: close to the raw samples'
 * percentile of the same interval (src/result/interval-latency.ts; bench/results/timeline.md).
 */
export const LatencyPointSchema = z.object({
  /** End of the interval, seconds since the synchronised start. */
  tS: z.number().nonnegative(),
  /** Samples in the interval, over every runner. */
  count: z.number().int().nonnegative(),
  /** Percentiles of the interval's samples; absent when it had none. */
  p50: z.number().nonnegative().optional(),
  p90: z.number().nonnegative().optional(),
  p95: z.number().nonnegative().optional(),
  p99: z.number().nonnegative().optional(),
});

/** One interval of a latency series: see {@link LatencyPointSchema}. */
export type LatencyPoint = z.infer<typeof LatencyPointSchema>;

/**
 * Per-interval percentiles, one series per metric key: `http_req_duration{expected_response:true}`
 * and each of the script's threshold trends (submetrics included). Absent when the runners could
 * not push (Kubernetes today, or the user's own `experimental-prometheus-rw` output).
 */
export const IntervalLatencySchema = z.object({
  /** Where the figures come from: k6's Prometheus remote-write output with native histograms. */
  source: z.literal('prometheus-rw-native-histograms'),
  /** The interval, s: adaptive, about 60 or more intervals per test. */
  intervalS: z.number().positive(),
  /** Half the width of a histogram bucket, a fraction (schema 3: 0.044): a lone sample's largest error. */
  bucketHalfWidth: z.number().nonnegative(),
  metrics: z.array(
    z.object({
      /** The metric key, as in thresholds. */
      metric: z.string(),
      /** `ms` for time trends, `value` for the others (the unit the script's samples have). */
      unit: z.enum(['ms', 'value']),
      /** In time order, from the first interval with samples to the last. */
      points: z.array(LatencyPointSchema),
    }),
  ),
});

/** Per-interval percentiles: see {@link IntervalLatencySchema}. */
export type IntervalLatency = z.infer<typeof IntervalLatencySchema>;

/** The whole series, as kept in the result JSON. */
export const TimelineSchema = z.object({
  schema: z.literal(TIMELINE_SCHEMA),
  /** The nominal recording interval, s. */
  intervalS: z.number().positive(),
  /** The trend the latency fields are read from. */
  latencyMetric: z.literal('http_req_duration'),
  /** What the p95 fields cover: every request since the start (k6's live trends have no window). */
  p95Scope: z.literal('since-start'),
  /** In time order. */
  points: z.array(TimelinePointSchema),
  /**
   * Per-interval percentiles (an addition that older readers ignore, so the schema tag stays @1);
   * the since-start `p95*` fields of `points` remain, labelled as such.
   */
  latency: IntervalLatencySchema.optional(),
});

/** The run over time: see {@link TimelineSchema}. */
export type Timeline = z.infer<typeof TimelineSchema>;
