/**
 * The run's own uncertainty in the result (`RunResult.uncertainty`): a confidence interval for each
 * headline figure, estimated from the run itself (src/result/uncertainty.ts explains the method),
 * so that a stored baseline carries its own. A leaf: it imports nothing of ours; src/result/schema.ts
 * checks only `level` of it and keeps the rest as it is (a loose object).
 *
 * Units are those of the figure: ms for latency percentiles, requests per second for `rps`, a
 * fraction in [0, 1] for `errorRate` and `checks`. Intervals may be asymmetric (a percentile's
 * upper side is longer in a right-skewed latency), so both ends are kept.
 */

import { z } from 'zod';

/** The format tag written in {@link Uncertainty.schema}; bumped on any incompatible change. */
export const UNCERTAINTY_SCHEMA = 'k6-distributed/uncertainty@1';

/** One figure's interval: the figure as the result reports it and the two ends at `level`. */
export const estimateSchema = z.looseObject({
  /** The figure itself (the same as in `metrics`), in its unit. */
  value: z.number(),
  /** Lower end of the interval, same unit. */
  low: z.number(),
  /** Upper end of the interval, same unit. */
  high: z.number(),
  /** How many samples it rests on (requests, checks). */
  samples: z.number().nonnegative(),
  /**
   * The variance inflation applied (design effect, ≥ 1): how much more the figure moved between
   * the run's intervals or runners than independent samples would have; 1 when not measurable.
   */
  designEffect: z.number().positive(),
});
export type Estimate = z.infer<typeof estimateSchema>;

/** A latency trend's percentiles (each an {@link Estimate} in ms). */
export const latencyEstimatesSchema = z.looseObject({
  p50: estimateSchema.optional(),
  p90: estimateSchema.optional(),
  p95: estimateSchema.optional(),
  p99: estimateSchema.optional(),
});
export type LatencyEstimates = z.infer<typeof latencyEstimatesSchema>;

/** The run's uncertainty: one interval per headline figure, at one confidence level. */
export const uncertaintySchema = z.looseObject({
  schema: z.literal(UNCERTAINTY_SCHEMA),
  /** The two-sided confidence level of every interval, a fraction (0.95). */
  level: z.number().gt(0).lt(1),
  /** The method, named for reports, e.g. `order statistics + batch means`. */
  method: z.string(),
  /** How many timeline intervals the batch means used (0 when the run had no usable timeline). */
  intervals: z.number().int().nonnegative(),
  /** Requests per second (`http_reqs` rate). */
  rps: estimateSchema.optional(),
  /**
   * Percentiles by latency trend key: `http_req_duration` and, when the run has it,
   * `http_req_duration{expected_response:true}` (the comparison reads the latter when both sides have it).
   */
  latency: z.record(z.string(), latencyEstimatesSchema),
  /** `http_req_failed` rate. */
  errorRate: estimateSchema.optional(),
  /** `checks` rate (share of checks that passed). */
  checks: estimateSchema.optional(),
});
export type Uncertainty = z.infer<typeof uncertaintySchema>;
