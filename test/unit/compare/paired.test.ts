import { describe, expect, it } from 'vitest';
import { judgePairedRounds, type PairedRoundInput, pairRounds } from '../../../src/compare/paired.ts';
import { studentTQuantile } from '../../../src/compare/student-t.ts';
import type { AbFigures, AbSide } from '../../../src/result/ab-schema.ts';

/** ABBA order for k rounds. */
const abba = (k: number): AbSide[] =>
  Array.from({ length: k }, (_, i) => (['A', 'B', 'B', 'A'] as const)[i % 4]!);

const figures = (p95: number, extra: Partial<AbFigures> = {}): AbFigures => ({
  rps: 100,
  p50: p95 / 2,
  p90: p95 * 0.9,
  p95,
  p99: p95 * 1.5,
  'error-rate': 0,
  checks: 1,
  requests: 1000,
  ...extra,
});

/** k rounds in ABBA order; `p95Of(side, i)` gives each round's p95 in ms. */
function rounds(k: number, p95Of: (side: AbSide, i: number) => number): PairedRoundInput[] {
  return abba(k).map((side, i) => ({
    round: i + 1,
    side,
    figures: figures(p95Of(side, i)),
    saturated: false,
  }));
}

/** A fixed "noise" sequence in ±4%, so that the tests do not depend on a random seed. */
const wobble = (i: number) => 1 + 0.04 * Math.sin(i * 2.3 + 0.7);

describe('studentTQuantile', () => {
  it.each([
    [0.975, 1, 12.7062],
    [0.975, 2, 4.3027],
    [0.975, 5, 2.5706],
    [0.995, 10, 3.1693],
    [0.975, 30, 2.0423],
    [0.95, 1000, 1.6464],
  ])('t(%s, %s) = %s (statistical tables)', (p, df, t) => {
    expect(studentTQuantile(p, df)).toBeCloseTo(t, 3);
    expect(studentTQuantile(1 - p, df)).toBeCloseTo(-t, 3);
  });
});

describe('pairRounds', () => {
  it('pairs consecutive rounds as [A, B] and leaves an odd last round out', () => {
    const pairs = pairRounds(rounds(5, () => 10));
    expect(pairs.map(([a, b]) => [a.round, b.round])).toEqual([
      [1, 2],
      [4, 3],
    ]);
  });
});

describe('judgePairedRounds', () => {
  it('judges a +30% p95 over 6 rounds as regressed, with a ratio interval above the tolerance', () => {
    const j = judgePairedRounds(rounds(6, (side, i) => (side === 'B' ? 13 : 10) * wobble(i)));
    const p95 = j.metrics.find((m) => m.id === 'p95')!;
    expect(p95.verdict).toBe('regressed');
    expect(p95.median).toBeGreaterThan(1.2);
    expect(p95.low).toBeGreaterThan(1.1);
    expect(p95.high).toBeLessThan(1.6);
    expect(p95.limit).toBeCloseTo(1.1, 10);
    expect(p95.changes).toHaveLength(3);
    expect(p95.reason).toMatch(
      /^B is worse by a mean \+\d+\.\d% \(95% interval \+\d+\.\d% to \+\d+\.\d%\), beyond the \+10\.0% tolerance$/,
    );
    expect(j).toMatchObject({
      reference: 'paired rounds',
      level: 0.95,
      rounds: 6,
      pairs: 3,
      verdict: 'regressed',
    });
    expect(j.reason).toContain('Latency p95');
  });

  it('judges identical sides as no regression', () => {
    const j = judgePairedRounds(rounds(6, (_side, i) => 10 * wobble(Math.floor(i / 2))));
    expect(j.verdict).toBe('no regression');
    for (const m of j.metrics) expect(m.verdict, m.id).toBe('no regression');
    const p95 = j.metrics.find((m) => m.id === 'p95')!;
    expect(p95.low).toBeCloseTo(1, 10);
    expect(p95.high).toBeCloseTo(1, 10);
  });

  it('judges 2 noisy rounds as inconclusive: one pair makes no interval', () => {
    const j = judgePairedRounds(rounds(2, (side) => (side === 'B' ? 14 : 10)));
    expect(j.verdict).toBe('inconclusive');
    expect(j.pairs).toBe(1);
    expect(j.metrics.find((m) => m.id === 'p95')!.reason).toMatch(
      /at least 2 pairs \(4 rounds\); run more rounds/,
    );
  });

  it('judges 4 rounds whose pairs disagree as inconclusive, saying more rounds would settle it', () => {
    const p95 = [10, 13, 10, 10.5];
    const j = judgePairedRounds(rounds(4, (_s, i) => p95[i]!));
    const m = j.metrics.find((x) => x.id === 'p95')!;
    expect(m.verdict).toBe('inconclusive');
    expect(m.reason).toMatch(/reaches past the \+10\.0% tolerance: more rounds would settle it/);
    expect(j.verdict).toBe('inconclusive');
  });

  it('a significant change within the tolerance is no regression only when the whole interval is within it', () => {
    const j = judgePairedRounds(rounds(8, (side, i) => (side === 'B' ? 10.3 : 10) * (1 + 0.001 * (i % 3))));
    expect(j.metrics.find((m) => m.id === 'p95')!.verdict).toBe('no regression');
  });

  it('judges RPS by its direction: fewer requests per second is worse', () => {
    const input = abba(6).map((side, i) => ({
      round: i + 1,
      side,
      figures: figures(10, { rps: (side === 'B' ? 70 : 100) * wobble(i) }),
      saturated: false,
    }));
    const rps = judgePairedRounds(input).metrics.find((m) => m.id === 'rps')!;
    expect(rps.verdict).toBe('regressed');
    expect(rps.limit).toBeCloseTo(0.9, 10);
    expect(rps.high).toBeLessThan(0.9);
  });

  it('judges the error rate on the difference scale, where a rate of 0 is fine', () => {
    const input = abba(6).map((side, i) => ({
      round: i + 1,
      side,
      figures: figures(10, { 'error-rate': side === 'B' ? 0.05 + 0.001 * i : 0 }),
      saturated: false,
    }));
    const j = judgePairedRounds(input);
    const errors = j.metrics.find((m) => m.id === 'error-rate')!;
    expect(errors).toMatchObject({ scale: 'difference', verdict: 'regressed' });
    expect(errors.low).toBeGreaterThan(0.04);
    expect(j.verdict).toBe('regressed');
  });

  it('a saturated round on either side makes every metric inconclusive, even a clear regression', () => {
    const input = rounds(6, (side) => (side === 'B' ? 20 : 10));
    input[3] = {
      ...input[3]!,
      saturated: true,
      saturationReasons: ['runner 0 dropped 12 of 200 iterations (6.0%)'],
    };
    const j = judgePairedRounds(input);
    expect(j.verdict).toBe('inconclusive');
    for (const m of j.metrics) expect(m.verdict).toBe('inconclusive');
    expect(j.reason).toBe(
      'the load generator saturated in round 4 (A): runner 0 dropped 12 of 200 iterations (6.0%); it measured itself, not the target: give it more VUs or runners',
    );
  });

  it('a metric missing from a round is inconclusive; an ungated one does not decide', () => {
    const input = rounds(4, () => 10);
    input[1] = { ...input[1]!, figures: { ...input[1]!.figures, checks: undefined } };
    const j = judgePairedRounds(input, { gate: ['p95'] });
    expect(j.metrics.find((m) => m.id === 'checks')).toMatchObject({ verdict: 'inconclusive', gated: false });
    expect(j.verdict).toBe('no regression');
  });

  it('a metric no round measured (a script without checks) is not gated and decides nothing', () => {
    const input = rounds(6, () => 10).map((r) => ({ ...r, figures: { ...r.figures, checks: undefined } }));
    const j = judgePairedRounds(input);
    expect(j.metrics.find((m) => m.id === 'checks')).toMatchObject({
      verdict: 'inconclusive',
      gated: false,
      reason: 'not measured in any round',
    });
    expect(j.verdict).toBe('no regression');
  });

  it('a stricter level widens the interval', () => {
    const input = rounds(6, (side, i) => (side === 'B' ? 12 : 10) * wobble(i));
    const at = (level: number) => judgePairedRounds(input, { level }).metrics.find((m) => m.id === 'p95')!;
    expect(at(0.99).high! - at(0.99).low!).toBeGreaterThan(at(0.9).high! - at(0.9).low!);
    expect(() => judgePairedRounds(input, { level: 95 })).toThrow(/level must be in \(0, 1\)/);
  });
});
