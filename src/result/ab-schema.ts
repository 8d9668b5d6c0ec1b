/**
 * The result of interleaved A/B rounds (`k6-distributed ab`, the run action's `ab-rounds`): one
 * document holding both sides, every round and the paired judgement. A leaf: it imports nothing of
 * ours. Written by src/compare/ab-result.ts, judged by src/compare/paired.ts, rendered by
 * src/render/paired.ts; docs/how-it-works.md ("A/B rounds") explains the design.
 *
 * Units: latency in ms, `rps` in requests per second, `error-rate` and `checks` as fractions
 * (0.01 = 1%), `requests` a count, times ISO 8601, durations in s. Ratios are B/A (head over base).
 */

import { z } from 'zod';

/** The format tag written in `schema`; bumped on any incompatible change. */
export const AB_RESULT_SCHEMA = 'k6-distributed/ab@1';

/** The two sides: A is the base (the reference), B the head (the change under test). */
export const AB_SIDES = ['A', 'B'] as const;
export type AbSide = (typeof AB_SIDES)[number];

/** The three verdict words of a comparison (the same as the single-run comparison's). */
export const PAIRED_VERDICTS = ['regressed', 'no regression', 'inconclusive'] as const;
export type PairedVerdictWord = (typeof PAIRED_VERDICTS)[number];

/**
 * A round's key figures, read from its run's result: `http_reqs` rate, `http_req_duration`
 * percentiles (of `{expected_response:true}` when the run has it), `http_req_failed` rate, `checks`
 * rate, `http_reqs` count. A figure the run did not have is absent.
 */
export const abFiguresSchema = z.object({
  rps: z.number().optional(),
  p50: z.number().optional(),
  p90: z.number().optional(),
  p95: z.number().optional(),
  p99: z.number().optional(),
  'error-rate': z.number().optional(),
  checks: z.number().optional(),
  requests: z.number().optional(),
});
export type AbFigures = z.infer<typeof abFiguresSchema>;

/** One round: one full distributed run of the script on one side. */
export const abRoundSchema = z.object({
  /** 1-based position in the running order. */
  round: z.number().int().positive(),
  /** 1-based ABBA block (rounds 1-4 are block 1, 5-8 block 2, …). */
  block: z.number().int().positive(),
  side: z.enum(AB_SIDES),
  /** ISO 8601 time the round's synchronised start was sent; its end; the window rates are over, in s. */
  startedAt: z.string(),
  endedAt: z.string(),
  durationS: z.number(),
  /** The round's own run id (the `k6d_run` tag of its samples), when it had one. */
  runId: z.string().optional(),
  /** The round's own verdict (its thresholds and runners), as one `k6 run` would give it. */
  verdict: z.enum(['passed', 'failed']),
  failures: z.array(z.string()),
  /** Whether its load generator saturated (`RunResult.loadGenerator.saturated`), and why. */
  saturated: z.boolean(),
  saturationReasons: z.array(z.string()),
  figures: abFiguresSchema,
});
export type AbRound = z.infer<typeof abRoundSchema>;

/** One side: what made it different, and the median of its rounds' figures. */
export const abSideSchema = z.object({
  /** How the report names it (`base`, `head`, or what the user gave). */
  label: z.string(),
  /** Environment variables given to k6 for this side (`-e KEY=VALUE`), e.g. `{ BASE_URL: … }`. */
  env: z.record(z.string(), z.string()),
  /** Extra k6 flags for this side only. */
  k6Args: z.array(z.string()),
  rounds: z.number().int().nonnegative(),
  /** The median over this side's rounds of each figure. */
  aggregate: abFiguresSchema,
  /** `true` when any of its rounds saturated. */
  saturated: z.boolean(),
});
export type AbSideResult = z.infer<typeof abSideSchema>;

/**
 * One metric's paired judgement. The pairs are consecutive rounds (1-2, 3-4, …; in ABBA order
 * each pair holds one A and one B); the difference of a pair is `ln(B) - ln(A)` on the `log` scale
 * (latency, RPS) or `B - A` on the `difference` scale (error rate and checks, fractions that may be
 * 0). `low`/`high` bound the mean difference with a Student t interval at the judgement's level,
 * shown as a ratio B/A (log) or a difference in the metric's unit (difference).
 */
export const pairedMetricSchema = z.object({
  id: z.enum(['rps', 'p50', 'p90', 'p95', 'p99', 'error-rate', 'checks']),
  label: z.string(),
  direction: z.enum(['higher', 'lower']),
  scale: z.enum(['log', 'difference']),
  /** Whether it decides the overall verdict (named in the gate). */
  gated: z.boolean(),
  /** Per pair: B/A (log) or B - A (difference), in running order. */
  changes: z.array(z.number()),
  /** The median of `changes`. */
  median: z.number().optional(),
  /** The mean change: exp(mean ln ratio) (log) or the mean difference. */
  mean: z.number().optional(),
  low: z.number().optional(),
  high: z.number().optional(),
  /**
   * The worse side's limit in the same form as `changes`: `1 + t` (log, lower is better),
   * `1 - t` (log, higher is better), `+t`/`-t` (difference), t from the metric's tolerance.
   */
  limit: z.number().optional(),
  verdict: z.enum(PAIRED_VERDICTS),
  /** One line: why this verdict, and for `inconclusive` what would settle it. */
  reason: z.string(),
});
export type PairedMetric = z.infer<typeof pairedMetricSchema>;

/** The paired judgement of all key metrics. */
export const pairedJudgementSchema = z.object({
  /** What the changes are relative to: always `paired rounds`. */
  reference: z.literal('paired rounds'),
  /** Two-sided confidence level of the intervals (0.95 = 95%). */
  level: z.number().gt(0).lt(1),
  /** Rounds judged and the pairs they made. */
  rounds: z.number().int().nonnegative(),
  pairs: z.number().int().nonnegative(),
  /** `regressed` when a gated metric regressed, else `inconclusive` when one is, else `no regression`. */
  verdict: z.enum(PAIRED_VERDICTS),
  reason: z.string(),
  metrics: z.array(pairedMetricSchema),
});
export type PairedJudgement = z.infer<typeof pairedJudgementSchema>;

/** The whole A/B result. */
export const abResultSchema = z.object({
  schema: z.literal(AB_RESULT_SCHEMA),
  script: z.string(),
  /** How many runners each round used, and the backend they ran on. */
  runners: z.number().int().positive(),
  backend: z.string(),
  /** Always `ABBA`: A B B A, then again; an even K that is not a multiple of 4 ends on A B. */
  order: z.literal('ABBA'),
  startedAt: z.string(),
  endedAt: z.string(),
  a: abSideSchema,
  b: abSideSchema,
  rounds: z.array(abRoundSchema).max(1000),
  paired: pairedJudgementSchema,
  /** `true` when the rounds were interrupted before all K ran (the judgement is over those that did). */
  interrupted: z.boolean().optional(),
});
export type AbResult = z.infer<typeof abResultSchema>;
