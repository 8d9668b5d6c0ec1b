import { z } from 'zod';

/**
 * One load zone's part of a run's result (`zones` of the result JSON, src/result/schema.ts): its
 * runners' summaries merged as the whole run's are (src/result/aggregate.ts: counts summed,
 * percentiles from the merged quantile grids, never averaged), so that the zones' requests and
 * iterations add up to the run's. Latency percentiles are of `http_req_duration`, in ms; `rps` is
 * `http_reqs` per second over the whole run's window (`durationS`), so the zones' rps add up to the
 * run's; `errorRate` is `http_req_failed`'s rate, a fraction in [0, 1]. A leaf contract: it imports
 * nothing of ours.
 */
export const zoneResultSchema = z.looseObject({
  /** The zone's name as the zones input gives it (the value of the `k6d_zone` tag). */
  name: z.string(),
  /** Its share of the test, in percent. */
  share: z.number(),
  /** The run's indexes of its runners (consecutive). */
  runners: z.array(z.number()),
  /** How many of its runners completed their segment. */
  runnersOk: z.number(),
  /** Spread of its runners' starts, in ms. */
  startSkewMs: z.number(),
  /** Its runners' first start after the run's first, in ms: how late the zone started. */
  startOffsetMs: z.number(),
  /** `http_reqs` count. */
  requests: z.number(),
  /** `http_reqs` per second over the run's window. */
  rps: z.number(),
  /** `iterations` count. */
  iterations: z.number(),
  /** `http_req_failed` rate, a fraction; absent without HTTP requests. */
  errorRate: z.number().optional(),
  /** `http_req_duration` avg, med, p(90), p(95), p(99) and max, in ms; absent without samples. */
  latencyMs: z
    .looseObject({
      avg: z.number(),
      med: z.number(),
      p90: z.number(),
      p95: z.number(),
      p99: z.number(),
      max: z.number(),
    })
    .optional(),
});
/** One load zone's part of a run's result. */
export type ZoneResult = z.infer<typeof zoneResultSchema>;
