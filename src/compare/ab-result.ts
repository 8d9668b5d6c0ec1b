import { K6_METRIC } from '../k6/metrics.ts';
import {
  AB_RESULT_SCHEMA,
  type AbFigures,
  type AbResult,
  type AbRound,
  type AbSide,
  type AbSideResult,
} from '../result/ab-schema.ts';
import type { RunResult } from '../result/schema.ts';
import { keyMetricValue, latencyMetricKey } from './compare.ts';
import { METRIC_IDS } from './judgement.ts';
import { judgePairedRounds, type PairedOptions } from './paired.ts';

/**
 * Builds the A/B result (src/result/ab-schema.ts) from the rounds' run results: each round's key
 * figures, each side's medians, and the paired judgement (paired.ts). Pure, no I/O.
 */

/**
 * A run's key figures, read as the single-run comparison reads them (compare.ts `keyMetricValue`:
 * latency from `http_req_duration{expected_response:true}` when present), plus `http_reqs`' count.
 */
export function roundFigures(result: RunResult): AbFigures {
  const latencyKey = latencyMetricKey(undefined, result);
  const figures: AbFigures = {};
  for (const id of METRIC_IDS) {
    const value = keyMetricValue(id, result, latencyKey);
    if (value !== undefined && Number.isFinite(value)) figures[id] = value;
  }
  const requests = result.metrics[K6_METRIC.httpReqs]?.values.count;
  if (requests !== undefined) figures.requests = requests;
  return figures;
}

/** The median of each figure over some rounds (a figure no round has stays absent). */
export function medianFigures(figures: readonly AbFigures[]): AbFigures {
  const out: AbFigures = {};
  for (const key of [...METRIC_IDS, 'requests'] as const) {
    const values = figures.map((f) => f[key]).filter((v): v is number => v !== undefined);
    if (!values.length) continue;
    const s = values.sort((x, y) => x - y);
    const mid = Math.floor(s.length / 2);
    out[key] = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  }
  return out;
}

/** One side as it was asked for. */
export interface AbSideInput {
  label: string;
  env: Record<string, string>;
  k6Args: string[];
}

/** What {@link buildAbResult} needs. */
export interface AbResultInput {
  script: string;
  a: AbSideInput;
  b: AbSideInput;
  /** The rounds run, in running order, each with its whole result. */
  rounds: ReadonlyArray<{ round: number; block: number; side: AbSide; result: RunResult }>;
  /** `true` when fewer rounds ran than asked (an interruption). */
  interrupted: boolean;
  /** The judgement's level, tolerances and gate (paired.ts defaults otherwise). */
  judging?: PairedOptions;
}

/**
 * The A/B result of the rounds.
 * @throws RangeError when no round ran (there is nothing to hold), or from judgePairedRounds.
 */
export function buildAbResult(input: AbResultInput): AbResult {
  const first = input.rounds[0];
  const last = input.rounds.at(-1);
  if (!first || !last) throw new RangeError('buildAbResult: no round ran');
  const rounds: AbRound[] = input.rounds.map(({ round, block, side, result }) => ({
    round,
    block,
    side,
    startedAt: result.startedAt,
    endedAt: result.endedAt,
    durationS: result.durationS,
    ...(result.runId ? { runId: result.runId } : {}),
    verdict: result.verdict,
    failures: result.failures,
    saturated: result.loadGenerator?.saturated ?? false,
    saturationReasons: result.loadGenerator?.reasons ?? [],
    figures: roundFigures(result),
  }));
  const side = (which: AbSide, given: AbSideInput): AbSideResult => {
    const own = rounds.filter((r) => r.side === which);
    return {
      label: given.label,
      env: given.env,
      k6Args: given.k6Args,
      rounds: own.length,
      aggregate: medianFigures(own.map((r) => r.figures)),
      saturated: own.some((r) => r.saturated),
    };
  };
  return {
    schema: AB_RESULT_SCHEMA,
    script: input.script,
    runners: first.result.environment.runners,
    backend: first.result.environment.backend,
    order: 'ABBA',
    startedAt: first.result.startedAt,
    endedAt: last.result.endedAt,
    a: side('A', input.a),
    b: side('B', input.b),
    rounds,
    paired: judgePairedRounds(rounds, input.judging),
    ...(input.interrupted ? { interrupted: true } : {}),
  };
}

/**
 * The same A/B result judged again from its rounds alone: each side's medians and the paired
 * judgement recomputed with `judging` (the privileged report step's own gate, tolerances and level,
 * when the rounds came from a fork's run), every other field kept.
 */
export function rejudgeAb(ab: AbResult, judging: PairedOptions): AbResult {
  const aggregate = (side: AbSide) =>
    medianFigures(ab.rounds.filter((r) => r.side === side).map((r) => r.figures));
  return {
    ...ab,
    a: { ...ab.a, rounds: ab.rounds.filter((r) => r.side === 'A').length, aggregate: aggregate('A') },
    b: { ...ab.b, rounds: ab.rounds.filter((r) => r.side === 'B').length, aggregate: aggregate('B') },
    paired: judgePairedRounds(ab.rounds, judging),
  };
}
