/**
 * The load generator's health in the result (`RunResult.loadGenerator`): whether the runners
 * themselves held the test back, so that the figures describe the load generator rather than the
 * system under test. A leaf: it imports nothing of ours; src/result/schema.ts checks only
 * `saturated` and `reasons` of it and keeps the rest as it is (a loose object).
 *
 * Units: iterations and warnings are counts; `cpu` is a fraction of one CPU core (1 = one core
 * fully busy, above 1 for several), averaged over the runner's own test; `'unknown'` where the
 * backend cannot tell (Kubernetes: CPU, and warnings of a runner whose log could not be read).
 */

import { z } from 'zod';

/** A count or a fraction the backend could not read. */
const unknownOr = <T extends z.ZodType>(value: T) => z.union([value, z.literal('unknown')]);

/** One runner's figures. */
export const runnerHealthSchema = z.looseObject({
  /** 0-based runner index. */
  index: z.number().int().nonnegative(),
  /** Iterations its arrival-rate scenarios could not start (k6's `dropped_iterations` count). */
  droppedIterations: z.number().nonnegative(),
  /** Iterations it completed (k6's `iterations` count). */
  iterations: z.number().nonnegative(),
  /** How many times k6 warned "Insufficient VUs, reached N active VUs and cannot initialize more". */
  insufficientVUs: unknownOr(z.number().int().nonnegative()),
  /** Most VUs active at once (the `vus` gauge's max) and most VUs allocated (`vus_max`'s max). */
  vus: z.number().nonnegative(),
  vusMax: z.number().nonnegative(),
  /** The script has an arrival-rate scenario and `vus` reached `vus_max`: no VU was left to start an iteration. */
  vusMaxReached: z.boolean(),
  /** CPU used over its own test, a fraction of one core. */
  cpu: unknownOr(z.number().nonnegative()),
});
export type RunnerHealth = z.infer<typeof runnerHealthSchema>;

/** The whole run's load-generator health (its `runners` one by one, and the run's figures). */
export const loadGeneratorSchema = z.looseObject({
  /** `true` when the load generator held the test back; `reasons` says where. */
  saturated: z.boolean(),
  /** One line per saturated figure, naming the runner and the figure. */
  reasons: z.array(z.string()),
  /** Sum of the runners' dropped iterations. */
  droppedIterations: z.number().nonnegative(),
  /** Sum of the runners' warnings; `unknown` when some runner's log was not read. */
  insufficientVUs: unknownOr(z.number().int().nonnegative()),
  /** Any runner's `vusMaxReached`. */
  vusMaxReached: z.boolean(),
  /** The busiest runner's CPU, a fraction of one core; `unknown` when no runner's was read. */
  cpu: unknownOr(z.number().nonnegative()),
  runners: z.array(runnerHealthSchema),
});
export type LoadGenerator = z.infer<typeof loadGeneratorSchema>;
