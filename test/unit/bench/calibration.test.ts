import { describe, expect, it } from 'vitest';
import {
  fold,
  hasUncertainty,
  productPaired,
  standInPaired,
  stripUncertainty,
} from '../../../bench/calibration/judges.ts';
import { cells, parsePlan, schedule } from '../../../bench/calibration/plan.ts';
import { type RunRecord, toRecord, type WindowStats } from '../../../bench/calibration/runs.ts';
import { calibrationScript, windowCount } from '../../../bench/calibration/script.ts';
import {
  clusterUpper,
  gridRun,
  pairedTTest,
  rng,
  syntheticRun,
  WindowGrid,
} from '../../../bench/calibration/stats.ts';
import type { RunResult } from '../../../src/result/schema.ts';

// The calibration bench's own logic (bench/calibration/): its flags, run order, statistics and the
// judging adapters. The real runs are the bench's (npm run bench:calibration); here only the pure parts.

describe('calibration plan', () => {
  it('defaults to 60 s runs, 30 per cell, both shapes and a saturated cell', () => {
    const p = parsePlan([]);
    expect(p).toMatchObject({
      runs: 30,
      durationS: 60,
      rate: 100,
      shapes: ['mixed', 'cpu'],
      factors: [1, 1.05, 1.1, 1.2],
      windowS: 2,
    });
    expect(cells(p).map((c) => c.id)).toEqual([
      'mixed×1.00',
      'mixed×1.05',
      'mixed×1.10',
      'mixed×1.20',
      'cpu×1.00',
      'cpu×1.05',
      'cpu×1.10',
      'cpu×1.20',
      'saturated',
    ]);
  });

  it('names the flag of bad input', () => {
    expect(() => parsePlan(['--shapes', 'io'])).toThrow('--shapes: unknown shape "io"');
    expect(() => parsePlan(['--factors', '1.1,1'])).toThrow('--factors must start with 1');
    expect(() => parsePlan(['--runs', 'x'])).toThrow('--runs must be a number');
  });

  it('orders the rounds A B C C B A, so that drift reaches every cell alike', () => {
    const order = schedule(
      cells(parsePlan(['--shapes', 'mixed', '--factors', '1,1.2', '--saturated', 'none'])),
      3,
    );
    expect(order.map((o) => `${o.cell.id}/${o.round}`)).toEqual([
      'mixed×1.00/0',
      'mixed×1.20/0',
      'mixed×1.20/1',
      'mixed×1.00/1',
      'mixed×1.00/2',
      'mixed×1.20/2',
    ]);
  });

  it('gives every window of the script its own threshold, so the result keeps its quantiles', () => {
    const s = calibrationScript({ shape: 'cpu', rate: 50, durationS: 9, windowS: 2, maxVUs: 4 });
    expect(windowCount(9, 2)).toBe(5);
    expect(s).toContain('"http_req_duration{w:4}":["p(75)>=0","p(95)>=0","p(97)>=0","p(98)>=0"]');
    expect(s).not.toContain('{w:5}');
    expect(s).toContain("'/cpu?f='");
  });
});

describe('calibration statistics', () => {
  it('the stand-in paired test: a steady +20% regressed, a steady 0% passes, noise is inconclusive', () => {
    expect(pairedTTest([1.2, 1.19, 1.21, 1.2, 1.22, 1.18])).toBe('regressed');
    expect(pairedTTest([1.0, 1.01, 0.99, 1.0, 1.005, 0.995])).toBe('pass');
    expect(pairedTTest([0.8, 1.3, 0.9, 1.25, 1.0, 1.1])).toBe('inconclusive');
    // Significant but below the 3% minimum change: not a regression.
    expect(pairedTTest([1.01, 1.011, 1.012, 1.01, 1.011, 1.012])).toBe('pass');
  });

  it("mixes windows: the mixture of one window with itself has that window's p95", () => {
    const w: WindowStats = [100, 1, 4, 6, 8, 10, 12, 13, 15, 19, 20];
    const grid = new WindowGrid([w]);
    const g = gridRun(grid, [w, w]);
    const sum = g.cdfs[0]!.map((x, i) => x + g.cdfs[1]![i]!);
    expect(grid.quantile(sum, 200, 0.95)).toBeCloseTo(10, 1);
    expect(syntheticRun(grid, () => g, 6, 3, rng(1)).p99).toBeCloseTo(15, 0);
  });

  it('a window twice as slow moves the mixture p95 between the two', () => {
    const fast: WindowStats = [100, 1, 4, 6, 8, 10, 12, 13, 15, 19, 20];
    const slow: WindowStats = [100, 2, 8, 12, 16, 20, 24, 26, 30, 38, 40];
    const grid = new WindowGrid([fast, slow]);
    const g = gridRun(grid, [fast, slow]);
    const p95 = grid.quantile(
      g.cdfs[0]!.map((x, i) => x + g.cdfs[1]![i]!),
      200,
      0.95,
    );
    expect(p95).toBeGreaterThan(10);
    expect(p95).toBeLessThan(20);
  });

  it('bounds a share by resampling runs', () => {
    expect(clusterUpper(5, 5, () => true, true)).toBe(1);
    expect(clusterUpper(5, 5, () => false, true)).toBe(0);
    const upper = clusterUpper(10, 10, (i) => i === 0, false);
    expect(upper).toBeGreaterThan(0.1);
  });
});

describe('calibration judging adapters', () => {
  it('folds the product verdicts', () => {
    expect(
      ['passed', 'no regression', 'no-regression', 'regressed', 'inconclusive', 'environment-changed'].map(
        fold,
      ),
    ).toEqual(['pass', 'pass', 'pass', 'regressed', 'inconclusive', 'other']);
  });

  it('finds and strips an uncertainty field at any depth', () => {
    const r = { metrics: { x: { values: { 'p(95)': 3 }, uncertainty: { p95: [2, 4] } } } };
    expect(hasUncertainty(r)).toBe(true);
    expect(stripUncertainty(r)).toEqual({ metrics: { x: { values: { 'p(95)': 3 } } } });
    expect(hasUncertainty(stripUncertainty(r))).toBe(false);
  });

  it('calls the product paired judging through the adapter in ABBA order, and says when it knows no function', () => {
    const seen: unknown[] = [];
    const mod = {
      judgePairedRounds: (input: unknown, options: unknown) => {
        seen.push(input, options);
        return { verdict: 'regressed' };
      },
    };
    const a = { loadGenerator: { saturated: true, reasons: [] } } as unknown as RunResult;
    const b = {} as RunResult;
    const figures = (r: RunResult) => (r === a ? 'fa' : 'fb');
    const options = { gate: ['p95'], tolerances: {} };
    expect(
      productPaired(
        mod,
        [
          { a, b },
          { a, b },
        ],
        options,
        figures,
      ),
    ).toBe('regressed');
    expect(seen).toEqual([
      [
        { round: 1, side: 'A', figures: 'fa', saturated: true },
        { round: 2, side: 'B', figures: 'fb', saturated: false },
        { round: 3, side: 'B', figures: 'fb', saturated: false },
        { round: 4, side: 'A', figures: 'fa', saturated: true },
      ],
      options,
    ]);
    expect(productPaired({ other: () => 'x' }, [{ a, b }], options, figures)).toBeUndefined();
  });

  it('judges A/B rounds with a saturated side inconclusive', () => {
    const run = (p95: number, saturated: boolean) =>
      ({
        metrics: { http_req_duration: { values: { 'p(95)': p95 } } },
        loadGenerator: { saturated, reasons: [] },
      }) as unknown as RunResult;
    const rounds = [1, 2, 3].map(() => ({ a: run(10, false), b: run(20, false) }));
    expect(standInPaired(rounds)).toBe('regressed');
    expect(standInPaired([...rounds, { a: run(10, false), b: run(20, true) }])).toBe('inconclusive');
  });

  it('splits a result into the judged result and its windows', () => {
    const v = (p: number) => ({
      'p(75)': p * 0.7,
      'p(97)': p * 1.05,
      'p(98)': p * 1.1,
      count: 10,
      min: p / 4,
      med: p / 2,
      'p(50)': p / 2,
      'p(90)': p * 0.9,
      'p(95)': p,
      'p(99)': p * 1.2,
      'p(99.9)': p * 1.3,
      max: p * 1.4,
    });
    const full = {
      metrics: {
        http_req_duration: { type: 'trend', values: v(5) },
        'http_req_duration{w:1}': { type: 'trend', values: v(6) },
        'http_req_duration{w:0}': { type: 'trend', values: v(4) },
      },
      thresholds: [{ x: 1 }],
      summary: { big: true },
    } as unknown as RunResult;
    const rec: RunRecord = toRecord(full, {
      seq: 0,
      cell: 'mixed×1.00',
      shape: 'mixed',
      factor: 1,
      saturated: false,
      round: 0,
    });
    expect(Object.keys(rec.result.metrics)).toEqual(['http_req_duration']);
    expect(rec.windows.map((w) => w[5])).toEqual([4, 6]);
    expect('summary' in rec.result).toBe(false);
  });
});
