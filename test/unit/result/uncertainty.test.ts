import { describe, expect, it } from 'vitest';
import {
  batchDesignEffect,
  estimateUncertainty,
  normalQuantile,
  percentileInterval,
  pooledMoments,
  rateInterval,
  wilsonInterval,
} from '../../../src/result/uncertainty.ts';
import { uncertaintySchema } from '../../../src/result/uncertainty-schema.ts';
import { exponential, rng, simulatedResult, trendOf } from '../../support/samples.ts';

// The in-run intervals: their math, and how often they cover the truth over many seeded draws of a
// known distribution (simulated: a unit test cannot make hundreds of real runs; the real runs are in
// test/e2e/verdict.test.ts).

describe('the normal quantile', () => {
  it('matches the tables', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.99)).toBeCloseTo(2.326348, 5);
    expect(normalQuantile(0.95)).toBeCloseTo(1.644854, 5);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(() => normalQuantile(1)).toThrow(RangeError);
  });
});

describe('a percentile interval from the merged quantile grids', () => {
  const MEAN = 4;
  const truth = (p: number) => -MEAN * Math.log(1 - p / 100);

  it('covers the true p50, p95 and p99 of an exponential latency in about 95% of 400 draws', () => {
    const random = rng(1);
    const covered = { 50: 0, 95: 0, 99: 0 };
    const draws = 400;
    for (let i = 0; i < draws; i++) {
      const samples = exponential(random, 2000, MEAN);
      const trends = [trendOf(samples.slice(0, 1000)), trendOf(samples.slice(1000))];
      for (const p of [50, 95, 99] as const) {
        const e = percentileInterval(trends, p, 1)!;
        if (e.low <= truth(p) && truth(p) <= e.high) covered[p]++;
      }
    }
    for (const p of [50, 95, 99] as const) {
      const rate = covered[p] / draws;
      // 95% nominal; one rank of slack each side makes it slightly conservative. ±2.7 binomial sd.
      expect(rate, `p${p} covered ${covered[p]} of ${draws}`).toBeGreaterThanOrEqual(0.92);
      expect(rate, `p${p} covered ${covered[p]} of ${draws}`).toBeLessThanOrEqual(0.985);
    }
  });

  it('is wide for a tiny sample and narrow for a big one, and widens with the design effect', () => {
    const random = rng(2);
    const small = percentileInterval([trendOf(exponential(random, 100, MEAN))], 99, 1)!;
    const big = percentileInterval([trendOf(exponential(random, 50_000, MEAN))], 99, 1)!;
    expect((small.high - small.low) / small.value).toBeGreaterThan(0.15);
    expect((big.high - big.low) / big.value).toBeLessThan(0.06);
    const trends = [trendOf(exponential(random, 5000, MEAN))];
    const plain = percentileInterval(trends, 95, 1)!;
    const inflated = percentileInterval(trends, 95, 4)!;
    expect(inflated.high - inflated.low).toBeGreaterThan(1.7 * (plain.high - plain.low));
  });

  it('reads the mean and variance of the pooled samples from the grids', () => {
    const samples = exponential(rng(3), 20_000, MEAN);
    const { mean, variance } = pooledMoments([
      trendOf(samples.slice(0, 10_000)),
      trendOf(samples.slice(10_000)),
    ]);
    const m = samples.reduce((a, b) => a + b, 0) / samples.length;
    const v = samples.reduce((a, b) => a + (b - m) ** 2, 0) / samples.length;
    expect(mean).toBeCloseTo(m, 1);
    expect(Math.abs(variance - v) / v).toBeLessThan(0.03);
  });

  it('gives the same bits from a grid read packed as its knots (a compact summary) as from its points', () => {
    const trends = [0, 1].map((k) => trendOf(exponential(rng(5 + k), 10_000, MEAN)));
    // Each grid again, packed as parseRunnerSummary reads a compact summary: [min, …values, max]
    // in one array, the values a view of it.
    const packed = trends.map((t) => {
      const { count, min, max, points } = t.grid;
      const knots = Float64Array.from([min, ...points.map(([, v]) => v), max]);
      const fractions = Float64Array.from(points, ([f]) => f);
      const values = knots.subarray(1, knots.length - 1);
      return { ...t, grid: { count, min, max, points, packed: { fractions, values, knots } } };
    });
    expect(packed[0]!.grid.points.length).toBeGreaterThan(100);
    const fromPoints = pooledMoments(trends);
    const fromKnots = pooledMoments(packed);
    expect(fromKnots.mean).toBe(fromPoints.mean);
    expect(fromKnots.variance).toBe(fromPoints.variance);
  });
});

describe('the design effect by batch means', () => {
  it('is about 1 for independent samples and large when whole intervals drift', () => {
    const random = rng(4);
    const iid: number[] = [];
    for (let k = 0; k < 50; k++) {
      const batch = exponential(random, 200, 4);
      iid.push(batch.reduce((a, b) => a + b, 0) / batch.length);
    }
    const d = batchDesignEffect(
      iid.map((mean) => ({ n: 200, mean })),
      16,
    )!;
    expect(d).toBeLessThan(1.6);
    // Every other interval 40% slower (a noisy neighbour): the means move far more than σ²/n allows.
    const drift = iid.map((mean, k) => ({ n: 200, mean: k % 2 === 0 ? mean * 1.4 : mean }));
    expect(batchDesignEffect(drift, 16)!).toBeGreaterThan(5);
    expect(batchDesignEffect([{ n: 10, mean: 1 }], 1)).toBeUndefined();
  });
});

describe('rate and proportion intervals', () => {
  it("Wilson's interval covers a 1% error rate in about 95% of 400 draws of 2,000 requests, and is not empty at 0", () => {
    const random = rng(5);
    let covered = 0;
    for (let i = 0; i < 400; i++) {
      let failed = 0;
      for (let k = 0; k < 2000; k++) if (random() < 0.01) failed++;
      const e = wilsonInterval(failed, 2000)!;
      if (e.low <= 0.01 && 0.01 <= e.high) covered++;
    }
    expect(covered / 400).toBeGreaterThanOrEqual(0.92);
    const zero = wilsonInterval(0, 1000)!;
    expect(zero.low).toBe(0);
    expect(zero.high).toBeCloseTo(3.84 / 1003.84, 4);
    // Fewer effective samples: wider.
    expect(wilsonInterval(0, 1000, 4)!.high).toBeGreaterThan(3 * zero.high);
  });

  it('RPS: never narrower than Poisson, wider when the intervals vary', () => {
    const steady = Array.from({ length: 10 }, (_, i) => ({
      tS: i + 1,
      intervalS: 1,
      requests: 100,
      rps: 100,
      vus: 1,
      errorRate: 0,
      runners: 1,
    }));
    const flat = rateInterval(100, 1000, steady)!;
    expect(flat.high - flat.value).toBeCloseTo(100 * 1.959964 * Math.sqrt(1 / 1000), 3);
    const bumpy = steady.map((p, i) => ({ ...p, requests: i % 2 ? 60 : 140, rps: i % 2 ? 60 : 140 }));
    const wide = rateInterval(100, 1000, bumpy)!;
    expect(wide.high - wide.value).toBeGreaterThan(3 * (flat.high - flat.value));
    expect(wide.designEffect).toBeGreaterThan(9);
  });
});

describe('the uncertainty of a result', () => {
  it('has every headline figure, in the documented shape', () => {
    const result = simulatedResult(6, { n: 4000, meanMs: 4 });
    const u = uncertaintySchema.parse(result.uncertainty);
    expect(u.level).toBe(0.95);
    expect(u.intervals).toBe(40);
    expect(Object.keys(u.latency).sort()).toEqual([
      'http_req_duration',
      'http_req_duration{expected_response:true}',
    ]);
    for (const p of ['p50', 'p90', 'p95', 'p99'] as const) {
      const e = u.latency.http_req_duration![p]!;
      expect(e.low).toBeLessThanOrEqual(e.value);
      expect(e.high).toBeGreaterThanOrEqual(e.value);
      expect(e.samples).toBe(4000);
    }
    expect(u.rps!.value).toBe(100);
    expect(u.errorRate).toMatchObject({ value: 0, low: 0 });
    expect(u.checks).toMatchObject({ value: 1, high: 1 });
    // Without a timeline: no batch means, still intervals.
    const bare = estimateUncertainty({ metrics: result.metrics, latency: {} });
    expect(bare.intervals).toBe(0);
    expect(bare.rps).toBeDefined();
  });
});
