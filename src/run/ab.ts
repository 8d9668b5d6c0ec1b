import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RunConfig } from '../config.ts';
import { ConfigurationError, RunError } from '../errors.ts';
import { resolveK6Binary } from '../k6/binary.ts';
import type { AbSide } from '../result/ab-schema.ts';
import type { RunResult } from '../result/schema.ts';
import type { RunDependencies } from './index.ts';
import { preflight } from './preflight.ts';

/**
 * Interleaved A/B rounds: K full distributed runs of one script, alternating the base (A) and the
 * head (B) in ABBA blocks (A B B A, A B B A, …) on the same backend and runners, each round the
 * whole pipeline of {@link runTest} (src/run/index.ts). The two sides differ only by what
 * {@link AbSideSpec} gives each: environment variables (`-e KEY=VALUE`, e.g. two `BASE_URL`s) and
 * extra k6 flags. A round lasts as long as the script's own test (its scenarios' durations); a
 * shorter or longer round is the script's business (e.g. `-e DURATION=30s` for a script that reads
 * it), so both sides always run the same load. The judgement is src/compare/paired.ts.
 */

/** What one side adds to the common k6 flags. */
export interface AbSideSpec {
  /** How reports name it, e.g. `base` or `head`. */
  label: string;
  /** Environment variables for k6 (`-e KEY=VALUE`). */
  env: Record<string, string>;
  /** Extra k6 flags for this side only, after the common ones (so they win). */
  k6Args: string[];
}

/** The rounds to run. */
export interface AbSpec {
  /** K: an even number of rounds, at least 2. */
  rounds: number;
  a: AbSideSpec;
  b: AbSideSpec;
}

/** One finished round and its run's whole result. */
export interface AbRoundRun {
  /** 1-based running order and ABBA block. */
  round: number;
  block: number;
  side: AbSide;
  result: RunResult;
}

/** The side of each of K rounds in ABBA order: `abOrder(6)` = A B B A A B. */
export function abOrder(rounds: number): AbSide[] {
  return Array.from({ length: rounds }, (_, i) => (['A', 'B', 'B', 'A'] as const)[i % 4]!);
}

/**
 * Checks K, as the user wrote its flag or input (`--rounds`, `ab-rounds`), before any load.
 * @returns K as a number.
 * @throws ConfigurationError naming the flag: not a whole number, below 2, or odd (a round left
 *   without its pair would be run for nothing).
 */
export function parseRounds(text: string, flag: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t)) throw new ConfigurationError(`${flag}: "${text}" is not a whole number of rounds`);
  const k = Number(t);
  if (k < 2 || k % 2 !== 0)
    throw new ConfigurationError(
      `${flag}: ${k} rounds; give an even number of at least 2 (the rounds are judged in A-B pairs), e.g. 6`,
    );
  return k;
}

/**
 * Parses `KEY=VALUE` environment entries, as the user wrote them after `flag`.
 * @throws ConfigurationError naming the flag when an entry has no `=` or an empty key.
 */
export function parseEnvEntries(entries: readonly string[], flag: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.indexOf('=');
    if (at <= 0) throw new ConfigurationError(`${flag}: "${entry}" is not KEY=VALUE`);
    env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}

/**
 * Checks that the two sides differ: an A/B run of one version against itself judges nothing.
 * @throws ConfigurationError naming `flags` (e.g. `--a-env/--b-env`).
 */
export function checkSidesDiffer(spec: AbSpec, flags: string): void {
  const same =
    JSON.stringify(Object.entries(spec.a.env).sort()) === JSON.stringify(Object.entries(spec.b.env).sort()) &&
    JSON.stringify(spec.a.k6Args) === JSON.stringify(spec.b.k6Args);
  if (same) throw new ConfigurationError(`${flags}: A and B are the same; give each side its own value`);
}

/** The k6 flags of one side's round: the common ones, then the side's, then its `-e` entries. */
export function sideK6Args(common: readonly string[], side: AbSideSpec): string[] {
  return [...common, ...side.k6Args, ...Object.entries(side.env).flatMap(([k, v]) => ['-e', `${k}=${v}`])];
}

/**
 * The preflight (`k6 archive` + `k6 inspect`, src/run/preflight.ts) of one side's round, run and
 * thrown away: a side whose flags or environment k6 refuses is found before any load, not after
 * the other side's first round.
 * @throws ConfigurationError from the preflight, prefixed with the side, e.g. `B (head): k6 args: …`.
 */
export async function preflightSide(
  config: RunConfig,
  side: AbSide,
  label: string,
  spec: AbSideSpec,
): Promise<void> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'k6-distributed-ab-preflight-'));
  try {
    await preflight({
      k6Binary: resolveK6Binary(config.k6Binary),
      script: config.script,
      k6Args: sideK6Args(config.k6Args, spec),
      workDir,
    });
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw new ConfigurationError(
      `${side} (${label}): ${error.message}`,
      error.k6ExitCode === undefined ? {} : { k6ExitCode: error.k6ExitCode },
    );
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Runs the K rounds one after the other through `runRound` (src/run/index.ts `runTest` with the
 * caller's backend), each writing its result into a private temp folder (removed at the end); no
 * report, HTML or JUnit file per round. An interruption (during a round's test, or before its
 * start once a round has run) ends the rounds: the ones run so far are returned with `interrupted`.
 * @param config the common configuration; its `k6Args` are the flags both sides share.
 * @param runRound runs one round's configuration (each round is a run with its own run id).
 * @param checkSide checks one side before any round runs; default {@link preflightSide}.
 * @throws what checkSide throws (either side's bad flags, before any load); what runRound throws
 *   (a start failure).
 */
export async function runAbRounds(
  config: RunConfig,
  spec: AbSpec,
  deps: Pick<RunDependencies, 'log' | 'signal'>,
  runRound: (config: RunConfig) => Promise<RunResult>,
  checkSide: typeof preflightSide = preflightSide,
): Promise<{ rounds: AbRoundRun[]; interrupted: boolean }> {
  // Both sides' preflights before the first round: neither side's mistake costs the other's load.
  await checkSide(config, 'A', spec.a.label, spec.a);
  await checkSide(config, 'B', spec.b.label, spec.b);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'k6-distributed-ab-'));
  const rounds: AbRoundRun[] = [];
  try {
    for (const [i, side] of abOrder(spec.rounds).entries()) {
      if (deps.signal?.aborted) return { rounds, interrupted: true };
      const sideSpec = side === 'A' ? spec.a : spec.b;
      deps.log.info(`A/B round ${i + 1} of ${spec.rounds}: ${side} (${sideSpec.label})`);
      const { reportPath: _r, htmlPath: _h, junitPath: _j, ...common } = config;
      let result: RunResult;
      try {
        result = await runRound({
          ...common,
          k6Args: sideK6Args(config.k6Args, sideSpec),
          resultPath: path.join(dir, `round-${i + 1}-${side}.json`),
        });
      } catch (error) {
        // Interrupted before this round's start: the rounds already run are kept.
        if (error instanceof RunError && error.kind === 'interrupted' && rounds.length > 0)
          return { rounds, interrupted: true };
        throw error;
      }
      rounds.push({ round: i + 1, block: Math.floor(i / 4) + 1, side, result });
      if (result.failureKinds?.includes('interrupted')) return { rounds, interrupted: true };
    }
    return { rounds, interrupted: false };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
