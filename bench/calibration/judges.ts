import type { RunResult } from '../../src/result/schema.ts';
import { pairedTTest } from './stats.ts';

/**
 * The product's judging modes, found by feature detection so that the bench runs on today's main
 * and after issue 24's branches are merged:
 * - `judge` from src/compare/verdict.ts (else the older src/compare/judge.ts or src/pr-comment/judge.ts);
 * - the in-run uncertainty when results carry an `uncertainty` field anywhere (the fixed rule then
 *   judges copies with those fields removed);
 * - the paired judging of A/B rounds from src/compare/paired.ts, through {@link productPaired};
 *   without it, the stand-in paired t-test of stats.ts, labelled as such.
 */

/** A verdict folded to what the tables count. */
export type Verdict = 'regressed' | 'inconclusive' | 'pass' | 'other';

/** Keys whose values are the in-run uncertainty (removed for the fixed rule and the history gate). */
export const UNCERTAINTY_KEYS = ['uncertainty'];

type Mod = Record<string, unknown>;
type Fn = (...args: unknown[]) => unknown;

async function tryImport(rel: string): Promise<Mod | undefined> {
  try {
    return (await import(new URL(rel, import.meta.url).href)) as Mod;
  } catch {
    return undefined;
  }
}

/** Folds a product verdict (`passed`, `no-regression`, `regressed`, `inconclusive`, …) into {@link Verdict}. */
export function fold(v: unknown): Verdict {
  const s = String(v).toLowerCase().replace(/[\s_]/g, '-');
  if (s === 'regressed') return 'regressed';
  if (s === 'inconclusive') return 'inconclusive';
  if (s === 'passed' || s === 'pass' || s === 'no-regression' || s === 'ok') return 'pass';
  return 'other';
}

/** Whether a value holds any {@link UNCERTAINTY_KEYS} key at any depth. */
export function hasUncertainty(v: unknown, depth = 0): boolean {
  if (!v || typeof v !== 'object' || depth > 6) return false;
  for (const [k, x] of Object.entries(v))
    if (UNCERTAINTY_KEYS.includes(k) || hasUncertainty(x, depth + 1)) return true;
  return false;
}

/** A deep copy without the {@link UNCERTAINTY_KEYS} keys. */
export function stripUncertainty<T>(v: T): T {
  if (Array.isArray(v)) return v.map(stripUncertainty) as T;
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !UNCERTAINTY_KEYS.includes(k))
      .map(([k, x]) => [k, stripUncertainty(x)]),
  ) as T;
}

/** One A/B round: base (A) and head (B) measured next to each other. */
export interface Round {
  a: RunResult;
  b: RunResult;
}

/** The judging modes found. */
export interface Judges {
  fixed(base: RunResult, head: RunResult): Verdict;
  history(base: RunResult, head: RunResult, history: RunResult[]): Verdict;
  /** Present when `inRun` is true. */
  inRun(base: RunResult, head: RunResult): Verdict;
  paired(rounds: Round[]): Verdict;
  /** Whether the results carry an in-run uncertainty. */
  hasInRun: boolean;
  /** `product` (src/compare/paired.ts) or `stand-in` (paired t-test on p95). */
  pairedSource: 'product' | 'stand-in';
  /** Where `judge` was found, and anything that fell back. */
  notes: string[];
}

/**
 * ADAPTER to src/compare/paired.ts: its `judgePairedRounds(rounds, {gate, tolerances})` takes the
 * rounds in running order, `{round, side, figures, saturated}`, and pairs them 1-2, 3-4, …; the
 * pairs of A and B runs are laid out in ABBA order (A B, B A, …) as the product's rounds run, with
 * each run's figures read by src/compare/ab-result.ts `roundFigures`. Returns the verdict word, or
 * undefined when the module has no such function.
 */
export function productPaired(
  mod: Mod,
  rounds: Round[],
  options: { gate: unknown; tolerances: unknown },
  figuresOf: (r: RunResult) => unknown,
): unknown {
  const fn = mod.judgePairedRounds as Fn | undefined;
  if (typeof fn !== 'function') return undefined;
  const input = rounds.flatMap((r, i) => {
    const sides: Array<['A' | 'B', RunResult]> = [
      ['A', r.a],
      ['B', r.b],
    ];
    if (i % 2 === 1) sides.reverse();
    return sides.map(([side, result], j) => ({
      round: 2 * i + j + 1,
      side,
      figures: figuresOf(result),
      saturated: result.loadGenerator?.saturated === true,
    }));
  });
  const out = fn(input, options) as { verdict?: unknown } | string;
  return typeof out === 'string' ? out : out?.verdict;
}

const p95 = (r: RunResult): number =>
  r.metrics['http_req_duration{expected_response:true}']?.values['p(95)'] ??
  r.metrics.http_req_duration?.values['p(95)'] ??
  Number.NaN;

/** The stand-in for A/B rounds: saturated on either side → inconclusive, else {@link pairedTTest}. */
export function standInPaired(rounds: Round[]): Verdict {
  if (rounds.some((r) => r.a.loadGenerator?.saturated || r.b.loadGenerator?.saturated)) return 'inconclusive';
  return pairedTTest(rounds.map((r) => p95(r.b) / p95(r.a)));
}

/** Finds the modes. `inRunSeen`: whether any stored result carries an uncertainty. */
export async function loadJudges(inRunSeen: boolean): Promise<Judges> {
  const notes: string[] = [];
  let judgeFn: Fn | undefined;
  for (const rel of [
    '../../src/compare/verdict.ts',
    '../../src/compare/judge.ts',
    '../../src/pr-comment/judge.ts',
  ]) {
    const mod = await tryImport(rel);
    if (typeof mod?.judge === 'function') {
      judgeFn = mod.judge as Fn;
      notes.push(`judge from ${rel.slice(6)}`);
      break;
    }
  }
  if (!judgeFn)
    throw new Error(
      'no judge found in src/compare/verdict.ts, src/compare/judge.ts or src/pr-comment/judge.ts',
    );
  const judgement = (await tryImport('../../src/compare/judgement.ts')) ?? {};
  const options = { key: 'default', gate: judgement.DEFAULT_GATE, tolerances: judgement.DEFAULT_TOLERANCES };
  const call = (base: RunResult, head: RunResult, history?: RunResult[]) =>
    fold(
      (
        judgeFn({
          head,
          base,
          baseline: { source: 'file', state: 'found' },
          ...(history
            ? {
                history: {
                  runs: history.map((result, i) => ({ run: { id: i + 1, sha: `h${i}` }, result })),
                  requested: history.length,
                  skipped: 0,
                },
              }
            : {}),
          options,
          links: {},
        }) as { verdict: unknown }
      ).verdict,
    );
  const pairedMod = await tryImport('../../src/compare/paired.ts');
  const figuresOf = (await tryImport('../../src/compare/ab-result.ts'))?.roundFigures as Fn | undefined;
  let pairedSource: Judges['pairedSource'] = 'stand-in';
  if (pairedMod) {
    pairedSource = 'product';
    notes.push('paired judging: src/compare/paired.ts found');
  } else notes.push('A/B rounds judged by the STAND-IN paired t-test (src/compare/paired.ts not found)');
  return {
    fixed: (b, h) => call(stripUncertainty(b), stripUncertainty(h)),
    history: (b, h, hist) => call(stripUncertainty(b), stripUncertainty(h), hist.map(stripUncertainty)),
    inRun: (b, h) => call(b, h),
    paired: (rounds) => {
      if (pairedSource === 'product' && pairedMod && figuresOf) {
        try {
          const v = productPaired(pairedMod, rounds, options, figuresOf);
          if (v !== undefined) return fold(v);
          notes.push(
            'src/compare/paired.ts has no function productPaired knows (bench/calibration/judges.ts): stand-in used',
          );
        } catch (e) {
          notes.push(`paired adapter failed (${(e as Error).message}): stand-in used`);
        }
        pairedSource = 'stand-in';
      }
      return standInPaired(rounds);
    },
    get pairedSource() {
      return pairedSource;
    },
    hasInRun: inRunSeen,
    notes,
  };
}
