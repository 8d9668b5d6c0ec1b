import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunConfig } from '../../../src/config.ts';
import { parseRunConfig } from '../../../src/config.ts';
import { ConfigurationError, RunError } from '../../../src/errors.ts';
import { silentLogger } from '../../../src/log.ts';
import { type AbSpec, abOrder, parseEnvEntries, parseRounds, runAbRounds } from '../../../src/run/ab.ts';
import { makeResult } from '../../support/results.ts';

/*
 * The A/B rounds' loop (src/run/ab.ts) with an injected round: the order, each round's flags and
 * result file, and what an interruption keeps. Real rounds: test/e2e/ab-rounds.test.ts.
 */

const SPEC: AbSpec = {
  rounds: 6,
  a: { label: 'base', env: { BASE_URL: 'http://a' }, k6Args: [] },
  b: { label: 'head', env: { BASE_URL: 'http://b' }, k6Args: ['--tag', 'side=b'] },
};
const CONFIG = parseRunConfig({
  script: 'load.js',
  k6Args: ['-e', 'DURATION=3s'],
  reportPath: 'r.md',
  htmlPath: 'r.html',
});

/** No preflight: these tests run no k6 (the preflight of each side is checked below and in e2e). */
const noCheck = async () => {};

describe('abOrder', () => {
  it('is ABBA, block after block', () => {
    expect(abOrder(8).join('')).toBe('ABBAABBA');
    expect(abOrder(6).join('')).toBe('ABBAAB');
    expect(abOrder(2).join('')).toBe('AB');
  });
});

describe('parseRounds and parseEnvEntries', () => {
  it('take an even K of at least 2 and KEY=VALUE entries, naming the flag otherwise', () => {
    expect(parseRounds(' 6 ', '--rounds')).toBe(6);
    expect(() => parseRounds('0', '--rounds')).toThrow(
      '--rounds: 0 rounds; give an even number of at least 2',
    );
    expect(() => parseRounds('7', '--rounds')).toThrow('--rounds: 7 rounds');
    expect(() => parseRounds('4.0', '--rounds')).toThrow('--rounds: "4.0" is not a whole number of rounds');
    expect(parseEnvEntries(['A=1', 'URL=http://x/?a=b'], '--a-env')).toEqual({
      A: '1',
      URL: 'http://x/?a=b',
    });
    expect(() => parseEnvEntries(['=1'], '--a-env')).toThrow('--a-env: "=1" is not KEY=VALUE');
  });
});

describe('runAbRounds', () => {
  it("runs each round with the common flags then its side's, a result file of its own, no report", async () => {
    const seen: RunConfig[] = [];
    const ran = await runAbRounds(
      CONFIG,
      SPEC,
      { log: silentLogger },
      async (c) => {
        seen.push(c);
        expect(existsSync(path.dirname(c.resultPath))).toBe(true);
        return makeResult();
      },
      noCheck,
    );
    expect(ran.interrupted).toBe(false);
    expect(ran.rounds.map((r) => `${r.round}${r.side}${r.block}`)).toEqual([
      '1A1',
      '2B1',
      '3B1',
      '4A1',
      '5A2',
      '6B2',
    ]);
    expect(seen[0]!.k6Args).toEqual(['-e', 'DURATION=3s', '-e', 'BASE_URL=http://a']);
    expect(seen[1]!.k6Args).toEqual(['-e', 'DURATION=3s', '--tag', 'side=b', '-e', 'BASE_URL=http://b']);
    expect(seen.map((c) => path.basename(c.resultPath))).toEqual([
      'round-1-A.json',
      'round-2-B.json',
      'round-3-B.json',
      'round-4-A.json',
      'round-5-A.json',
      'round-6-B.json',
    ]);
    for (const c of seen)
      expect([c.reportPath, c.htmlPath, c.junitPath]).toEqual([undefined, undefined, undefined]);
    // The rounds' folder is removed.
    expect(existsSync(path.dirname(seen[0]!.resultPath))).toBe(false);
  });

  it('keeps the rounds run so far when a round is interrupted, during its test or before its start', async () => {
    const during = await runAbRounds(
      CONFIG,
      SPEC,
      { log: silentLogger },
      async (c) =>
        c.resultPath.includes('round-3') ? makeResult({}, { failureKinds: ['interrupted'] }) : makeResult(),
      noCheck,
    );
    expect(during).toMatchObject({ interrupted: true });
    expect(during.rounds).toHaveLength(3);
    let n = 0;
    const before = await runAbRounds(
      CONFIG,
      SPEC,
      { log: silentLogger },
      async () => {
        if (++n === 3) throw new RunError('interrupted', 'interrupted before the start');
        return makeResult();
      },
      noCheck,
    );
    expect(before).toMatchObject({ interrupted: true });
    expect(before.rounds).toHaveLength(2);
    // Before the first round, there is nothing to keep: the error goes on.
    await expect(
      runAbRounds(CONFIG, SPEC, { log: silentLogger }, () =>
        Promise.reject(new RunError('interrupted', 'x')),
      ),
    ).rejects.toThrow('x');
  });

  it("checks both sides before the first round: B's mistake costs no A round", async () => {
    const order: string[] = [];
    await expect(
      runAbRounds(
        CONFIG,
        SPEC,
        { log: silentLogger },
        async () => {
          order.push('round');
          return makeResult();
        },
        async (_c, side) => {
          order.push(side);
          if (side === 'B') throw new ConfigurationError('B (head): k6 args: --paused cannot be given');
        },
      ),
    ).rejects.toThrow('B (head): k6 args: --paused cannot be given');
    expect(order).toEqual(['A', 'B']);
  });
});
