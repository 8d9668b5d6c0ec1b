import { describe, expect, it } from 'vitest';
import { DEFAULT_TOLERANCES } from '../../../src/compare/judgement.ts';
import { describeNoiseVerdict, judgeWithHistory, median, normalRange } from '../../../src/compare/noise.ts';

const p95 = { direction: 'lower' as const, tolerance: DEFAULT_TOLERANCES.p95, unit: 'ms' as const };
const rps = { direction: 'higher' as const, tolerance: DEFAULT_TOLERANCES.rps, unit: '/s' as const };
/** Ten p95 readings of a quiet base branch around 41 ms. */
const QUIET = [40, 41, 42, 41, 39, 43, 41, 40, 42, 41];

describe('normalRange', () => {
  it('is median ± 3 × 1.4826 × MAD, skipping values that are not numbers', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    const range = normalRange([...QUIET, Number.NaN]);
    expect(range).toMatchObject({ median: 41, mad: 1, runs: 10 });
    expect(range.low).toBeCloseTo(41 - 3 * 1.4826, 6);
    expect(range.high).toBeCloseTo(41 + 3 * 1.4826, 6);
  });

  it('is not dragged by a few wild runs the way a mean and standard deviation are', () => {
    const withOutliers = [...QUIET.slice(0, 8), 400, 500];
    const range = normalRange(withOutliers);
    expect(range.median).toBe(41);
    expect(range.high).toBeLessThan(47);
    expect(() => normalRange([Number.NaN])).toThrow(RangeError);
  });
});

describe('judgeWithHistory', () => {
  it('names the method and flags a p95 outside the normal range and beyond the floors', () => {
    const verdict = judgeWithHistory({ ...p95, history: QUIET, head: 46 });
    expect(verdict).toMatchObject({
      regressed: true,
      method: 'history',
      change: 'worse',
      outsideRange: true,
    });
    expect(verdict.text).toBe('history: median 41.00ms, normal range 36.55ms–45.45ms over 10 runs');
    expect(describeNoiseVerdict('p95', verdict)).toBe(
      'p95 +12.2% (history: median 41.00ms, normal range 36.55ms–45.45ms over 10 runs)',
    );
  });

  it('lets pass a change beyond the floors that the history shows to be ordinary noise', () => {
    // A noisy base branch: 40–52 ms. Head 48 ms is +17% on the newest baseline run (41 ms): the
    // fixed rule alone calls it worse; the history says 48 ms is normal.
    const noisy = [40, 52, 44, 50, 42, 48, 46, 51, 43, 41];
    const verdict = judgeWithHistory({ ...p95, history: noisy, head: 48 });
    expect(verdict).toMatchObject({ regressed: false, outsideRange: false, method: 'history' });
    expect(judgeWithHistory({ ...p95, history: noisy.slice(-3), head: 48 })).toMatchObject({
      regressed: true,
      method: 'fixed',
    });
  });

  it('does not flag a change outside the range that stays under the floors (a very quiet history)', () => {
    const flat = [10, 10, 10, 10, 10, 10];
    const verdict = judgeWithHistory({ ...p95, history: flat, head: 10.5 });
    expect(verdict).toMatchObject({ outsideRange: true, change: 'unchanged', regressed: false });
  });

  it('only counts the bad side: RPS that falls is a regression, RPS that rises is not', () => {
    const history = [500, 510, 495, 505, 500, 498, 502];
    expect(judgeWithHistory({ ...rps, history, head: 420 })).toMatchObject({ regressed: true });
    expect(judgeWithHistory({ ...rps, history, head: 600 })).toMatchObject({
      regressed: false,
      change: 'better',
    });
    expect(judgeWithHistory({ ...rps, history, head: 420 }).text).toBe(
      'history: median 500.0/s, normal range 491.1/s–508.9/s over 7 runs',
    );
  });

  it('falls back to the fixed rule against the baseline below the minimum history, and says so', () => {
    const verdict = judgeWithHistory({ ...p95, history: [41, 42], base: 40, head: 45 });
    expect(verdict).toMatchObject({ method: 'fixed', regressed: true, change: 'worse' });
    expect(verdict.text).toBe('fixed tolerance 10% and 1 ms; history of 2 runs, 5 needed');
    expect(describeNoiseVerdict('p95', verdict)).toBe(
      'p95 +12.5% (fixed tolerance 10% and 1 ms; history of 2 runs, 5 needed)',
    );
    expect(judgeWithHistory({ ...p95, history: QUIET, head: 46 }, { minHistory: 11, k: 3 }).method).toBe(
      'fixed',
    );
  });

  it('reports a missing head value as missing, never as a regression', () => {
    expect(judgeWithHistory({ ...p95, history: QUIET, head: undefined })).toMatchObject({
      regressed: false,
      change: 'missing',
      outsideRange: false,
    });
  });
});
