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
});

/** The run over time: see {@link TimelineSchema}. */
export type Timeline = z.infer<typeof TimelineSchema>;
