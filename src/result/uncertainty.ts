import { K6_METRIC } from '../k6/metrics.ts';
import { knotsOf, mergePercentiles, type QuantileGrid } from './quantiles.ts';
import type { MetricResult } from './schema.ts';
import type { TimelinePoint } from './timeline-schema.ts';
import {
  type Estimate,
  type LatencyEstimates,
  UNCERTAINTY_SCHEMA,
  type Uncertainty,
} from './uncertainty-schema.ts';

/**
 * The run's own uncertainty: a confidence interval for RPS, the latency percentiles, the error
 * rate and the check rate, estimated from the run itself (shape: src/result/uncertainty-schema.ts;
 * the method is explained for users in docs/how-it-works.md, "How sure a figure is").
 *
 * - Percentiles: the distribution-free order-statistic interval. Of n independent samples, the
 *   number below the true p-quantile is Binomial(n, p), so the interval runs between the sample
 *   quantiles at ranks n·p ± z·√(n·p·(1−p)·D); both ends are read from the merged distribution
 *   (the runners' quantile grids, src/result/quantiles.ts). D is the design effect below.
 * - Design effect D (variance inflation, ≥ 1): requests of one run are not independent (a GC
 *   pause, a noisy neighbour, the warm-up slow a whole stretch). By batch means, the exact mean
 *   latency of each timeline interval m_i over n_i requests would vary as σ²/n_i if the requests
 *   were independent; D = Σ n_i (m_i − m)² / ((k − 1) σ²), with σ² the latency's variance (from
 *   the merged quantile function). The runners' own means give a second estimate the same way
 *   (runners are independent samples of one distribution: one slow node shows here); D is the
 *   larger of the two, and 1 when neither can be measured. Using the mean's inflation for a
 *   percentile is an approximation: it is what the live data (exact per-interval means only; k6's
 *   live percentiles have no window) allows.
 * - RPS: batch means over the timeline's intervals (the variance of the interval-weighted mean of
 *   per-interval rates), never narrower than the Poisson interval √N / T.
 * - Error rate and check rate: the Wilson score interval for a binomial proportion, with the
 *   sample count divided by D measured on the per-interval rates the same way. Checks per
 *   interval are not polled: they are taken proportional to the interval's requests.
 */

/** The confidence level of the intervals kept in the result (two-sided). */
export const UNCERTAINTY_LEVEL = 0.95;

/** What the method is called in reports. */
export const UNCERTAINTY_METHOD = 'order statistics and Wilson intervals, widened by batch means';

/**
 * The standard normal quantile Φ⁻¹(p) (Acklam's rational approximation, relative error < 1.2e-9).
 * @param p a probability in (0, 1).
 * @throws RangeError outside (0, 1).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs p in (0, 1), got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** z of a two-sided level: 1.96 for 0.95. */
export const zOfLevel = (level: number): number => normalQuantile(1 - (1 - level) / 2);

/** One runner's view of a latency trend. */
export interface RunnerTrend {
  count: number;
  /** Mean, in the trend's unit (ms). */
  avg: number;
  grid: QuantileGrid;
}

/**
 * Mean and variance of the runners' pooled samples, from their piecewise-linear quantile functions
 * (exact for that model: ∫ x(u) du and ∫ x(u)² du segment by segment). No allocation per knot: a
 * 1,000-runner result reads 1,000 grids here.
 */
export function pooledMoments(trends: readonly RunnerTrend[]): { mean: number; variance: number } {
  let n = 0;
  let sum = 0;
  let sumSq = 0;
  for (const t of trends) {
    if (t.count <= 0) continue;
    const { grid } = t;
    const knots = knotsOf(grid);
    if (knots.xs === grid.packed?.knots) {
      // The grid is its CDF's knots as they are (knotsOf): the same segments as below, without
      // the checks and clamps that cannot apply (the same sums, bit for bit).
      const { xs, ps } = knots;
      let m1 = 0;
      let m2 = 0;
      let a = xs[0]!;
      for (let i = 1; i < xs.length; i++) {
        const b = xs[i]!;
        const w = ps[i]! - ps[i - 1]!;
        m1 += (w * (a + b)) / 2;
        m2 += (w * (a * a + a * b + b * b)) / 3;
        a = b;
      }
      n += t.count;
      sum += t.count * m1;
      sumSq += t.count * m2;
      continue;
    }
    const fractions = grid.packed?.fractions;
    const values = grid.packed?.values;
    const size = fractions ? fractions.length : grid.points.length;
    let m1 = 0;
    let m2 = 0;
    let u0 = 0;
    let a = grid.min;
    // One segment [u0, p] × [a, b] at a time, in locals: a closure over them per grid took about
    // half as long again at 1,000 runners (cpu profile of bench/scale-pass.ts).
    for (let i = 0; i < size; i++) {
      const p = fractions ? fractions[i]! : grid.points[i]![0];
      const v = values ? values[i]! : grid.points[i]![1];
      if (!(p > u0 && p < 1 && Number.isFinite(v))) continue;
      const b = Math.min(Math.max(v, a), grid.max);
      const w = p - u0;
      m1 += (w * (a + b)) / 2;
      m2 += (w * (a * a + a * b + b * b)) / 3;
      u0 = p;
      a = b;
    }
    const b = Math.max(grid.max, a);
    const w = 1 - u0;
    m1 += (w * (a + b)) / 2;
    m2 += (w * (a * a + a * b + b * b)) / 3;
    n += t.count;
    sum += t.count * m1;
    sumSq += t.count * m2;
  }
  if (n === 0) return { mean: 0, variance: 0 };
  const mean = sum / n;
  return { mean, variance: Math.max(0, sumSq / n - mean * mean) };
}

/**
 * The design effect of a mean by batch means: groups (timeline intervals, runners) of `n` samples
 * with mean `mean`, against independent samples of variance `variance`:
 * D = Σ n_i (m_i − m)² / ((k − 1) σ²), at least 1. Undefined with fewer than 2 groups or no variance.
 */
export function batchDesignEffect(
  groups: ReadonlyArray<{ n: number; mean: number }>,
  variance: number,
): number | undefined {
  const used = groups.filter((g) => g.n > 0 && Number.isFinite(g.mean));
  if (used.length < 2 || !(variance > 0)) return undefined;
  const total = used.reduce((a, g) => a + g.n, 0);
  const mean = used.reduce((a, g) => a + g.n * g.mean, 0) / total;
  const between = used.reduce((a, g) => a + g.n * (g.mean - mean) ** 2, 0);
  return Math.max(1, between / ((used.length - 1) * variance));
}

/**
 * A percentile's order-statistic interval, read from the merged distribution.
 * @param trends the runners' trends (count > 0 used).
 * @param percent 0..100.
 * @param designEffect ≥ 1.
 */
export function percentileInterval(
  trends: readonly RunnerTrend[],
  percent: number,
  designEffect: number,
  level = UNCERTAINTY_LEVEL,
): Estimate | undefined {
  const used = trends.filter((t) => t.count > 0);
  const n = used.reduce((a, t) => a + t.count, 0);
  if (n === 0) return undefined;
  const p = percent / 100;
  const halfRanks = zOfLevel(level) * Math.sqrt(n * p * (1 - p) * designEffect);
  // One rank of slack either side: the sample quantile itself sits between two ranks.
  const lowP = Math.max(0, p - (halfRanks + 1) / n);
  const highP = Math.min(1, p + (halfRanks + 1) / n);
  const [value, low, high] = mergePercentiles(
    used.map((t) => t.grid),
    [percent, lowP * 100, highP * 100],
  );
  return { value: value!, low: low!, high: high!, samples: n, designEffect };
}

/**
 * Wilson's score interval for a proportion, with the sample count divided by the design effect.
 * @param successes the counted events (failed requests, passed checks).
 */
export function wilsonInterval(
  successes: number,
  n: number,
  designEffect = 1,
  level = UNCERTAINTY_LEVEL,
): Estimate | undefined {
  if (n <= 0) return undefined;
  const p = successes / n;
  const m = n / designEffect;
  const z = zOfLevel(level);
  const z2 = z * z;
  const center = (p + z2 / (2 * m)) / (1 + z2 / m);
  const half = (z / (1 + z2 / m)) * Math.sqrt((p * (1 - p)) / m + z2 / (4 * m * m));
  return {
    value: p,
    low: Math.max(0, Math.min(p, center - half)),
    high: Math.min(1, Math.max(p, center + half)),
    samples: n,
    designEffect,
  };
}

/**
 * RPS's interval by batch means over the intervals (the variance of the time-weighted mean of the
 * per-interval rates), never narrower than the Poisson one; centred on `value` (the result's RPS).
 */
export function rateInterval(
  value: number,
  count: number,
  points: readonly TimelinePoint[],
  level = UNCERTAINTY_LEVEL,
): Estimate | undefined {
  if (count <= 0 || !(value > 0)) return undefined;
  const z = zOfLevel(level);
  const total = points.reduce((a, p) => a + p.intervalS, 0);
  const requests = points.reduce((a, p) => a + p.requests, 0);
  // Relative standard errors: Poisson (count over the window) and batch means.
  const poisson = 1 / Math.sqrt(count);
  let batch = 0;
  if (points.length >= 2 && total > 0 && requests > 0) {
    const mean = requests / total;
    const k = points.length;
    const s = points.reduce((a, p) => a + (p.intervalS * (p.rps - mean)) ** 2, 0);
    batch = Math.sqrt((s * k) / (k - 1)) / total / mean;
  }
  const rel = Math.max(poisson, batch);
  return {
    value,
    low: Math.max(0, value * (1 - z * rel)),
    high: value * (1 + z * rel),
    samples: count,
    designEffect: (rel / poisson) ** 2,
  };
}

/** What {@link estimateUncertainty} reads. */
export interface UncertaintyInput {
  /** The global metrics (rates and counts are read here). */
  metrics: Record<string, MetricResult>;
  /** The runners' trends by latency key (`http_req_duration`, and the expected-response submetric). */
  latency: Record<string, RunnerTrend[]>;
  /** The timeline's points, when the run recorded one. */
  points?: readonly TimelinePoint[];
}

/** The run's uncertainty (see the module's method), at {@link UNCERTAINTY_LEVEL}. */
export function estimateUncertainty(input: UncertaintyInput, level = UNCERTAINTY_LEVEL): Uncertainty {
  const points = (input.points ?? []).filter((p) => p.intervalS > 0);
  const withRequests = points.filter((p) => p.requests > 0);
  const latency: Record<string, LatencyEstimates> = {};
  for (const [key, trends] of Object.entries(input.latency)) {
    const used = trends.filter((t) => t.count > 0);
    if (used.length === 0) continue;
    const { variance } = pooledMoments(used);
    const overTime = batchDesignEffect(
      withRequests.map((p) => ({ n: p.requests, mean: p.avgMs ?? Number.NaN })),
      variance,
    );
    const overRunners = batchDesignEffect(
      used.map((t) => ({ n: t.count, mean: t.avg })),
      variance,
    );
    const designEffect = Math.max(1, overTime ?? 1, overRunners ?? 1);
    const estimates: LatencyEstimates = {};
    for (const p of [50, 90, 95, 99] as const) {
      const e = percentileInterval(used, p, designEffect, level);
      if (e) estimates[`p${p}`] = e;
    }
    latency[key] = estimates;
  }
  const out: Uncertainty = {
    schema: UNCERTAINTY_SCHEMA,
    level,
    method: UNCERTAINTY_METHOD,
    intervals: points.length,
    latency,
  };
  const reqs = input.metrics[K6_METRIC.httpReqs]?.values;
  const rps = reqs ? rateInterval(reqs.rate ?? 0, reqs.count ?? 0, points, level) : undefined;
  if (rps) out.rps = rps;
  const failed = input.metrics[K6_METRIC.httpReqFailed]?.values;
  if (failed) {
    const n = (failed.passes ?? 0) + (failed.fails ?? 0);
    const p = n > 0 ? (failed.passes ?? 0) / n : 0;
    const d = batchDesignEffect(
      withRequests.map((x) => ({ n: x.requests, mean: x.errorRate })),
      p * (1 - p),
    );
    const e = wilsonInterval(failed.passes ?? 0, n, d ?? 1, level);
    if (e) out.errorRate = e;
  }
  const checks = input.metrics[K6_METRIC.checks]?.values;
  if (checks) {
    const n = (checks.passes ?? 0) + (checks.fails ?? 0);
    const q = n > 0 ? (checks.fails ?? 0) / n : 0;
    const requests = withRequests.reduce((a, x) => a + x.requests, 0);
    // Checks per interval taken proportional to its requests (the timeline counts failed checks only).
    const groups = withRequests.flatMap((x) => {
      if (x.checksFailed === undefined || requests === 0) return [];
      const c = (n * x.requests) / requests;
      return c > 0 ? [{ n: c, mean: x.checksFailed / c }] : [];
    });
    const d = batchDesignEffect(groups, q * (1 - q));
    const e = wilsonInterval(checks.passes ?? 0, n, d ?? 1, level);
    if (e) out.checks = e;
  }
  return out;
}
