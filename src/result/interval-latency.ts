/**
 * Per-interval latency percentiles for the timeline, from the native histograms k6's
 * `experimental-prometheus-rw` output pushes (see k6/remote-write.ts and docs/how-it-works.md).
 *
 * k6 keeps one cumulative Prometheus histogram per series (metric + tag set) per runner, and
 * pushes each series whose samples moved every push interval. A push minus the previous one of
 * the same series is exactly the samples in between: bucket counts subtract. The deltas of every
 * runner and every matching series add up, by interval, into one histogram per interval, whose
 * quantiles land close to the raw samples' (schema 3, k6's factor 1.1: buckets of ±4.4%,
 * {@link bucketHalfWidth}; measured in bench/results/timeline.md).
 */

import type { NativeHistogram, RemoteWriteSeries } from '../k6/remote-write.ts';
import { parseMetricKey } from '../k6/thresholds-parser.ts';
import type { IntervalLatency as IntervalLatencySeries, LatencyPoint } from './timeline-schema.ts';

/** The latency series every run records: requests with an expected response, as k6's own metric. */
export const EXPECTED_DURATION = 'http_req_duration{expected_response:true}';

/** Options of {@link IntervalLatencyRecorder}. */
export interface IntervalLatencyOptions {
  /** Metric keys as k6 writes them in thresholds, e.g. `http_req_duration{name:login}`. */
  metrics: readonly string[];
  /** How often runners push, ms: the span given to a series' first push. */
  pushIntervalMs: number;
}

/**
 * One delta: the samples a series (or, from a receiver in a runner Pod, every matching series of
 * one push) got between two pushes, for one tracked metric.
 */
export interface IntervalDelta {
  /** The tracked metric key, e.g. `http_req_duration{expected_response:true}`. */
  key: string;
  /** The span the samples fell in, epoch ms (the previous push's and this push's sample times). */
  fromMs: number;
  toMs: number;
  h: NativeHistogram;
  /** A time trend: values in seconds (k6 `adaptUnit`). */
  seconds: boolean;
}

/** Bucket `i`'s geometric midpoint: the value reported for samples in it. */
function midpoint(schema: number, index: number): number {
  return 2 ** ((index - 0.5) * 2 ** -schema);
}

/** The value `share` (0–1) of the way through bucket `index` on a log scale (0.5: its midpoint). */
function bucketPoint(schema: number, index: number, share: number): number {
  return 2 ** ((index - 1 + share) * 2 ** -schema);
}

/** A bucket's half-width: the largest relative error of its midpoint against any value in it (schema 3: 0.044). */
export function bucketHalfWidth(schema: number): number {
  return Math.sqrt(2 ** (2 ** -schema)) - 1;
}

/** `a - b`, bucket by bucket (`b` an earlier push of the same series; empty buckets dropped). */
export function subtractHistogram(a: NativeHistogram, b: NativeHistogram | undefined): NativeHistogram {
  if (!b) return a;
  const buckets = new Map<number, number>();
  for (const [i, n] of a.buckets) {
    const d = n - (b.buckets.get(i) ?? 0);
    if (d > 0) buckets.set(i, d);
  }
  return {
    ...a,
    count: a.count - b.count,
    sum: a.sum - b.sum,
    zeroCount: a.zeroCount - b.zeroCount,
    buckets,
  };
}

/** Adds `from` into `into` (same schema; a finer `from` would be wrong, so a differing schema throws). */
export function addHistogram(into: NativeHistogram, from: NativeHistogram): void {
  if (into.schema !== from.schema)
    throw new Error(`native histograms of schema ${into.schema} and ${from.schema} cannot be added`);
  into.count += from.count;
  into.sum += from.sum;
  into.zeroCount += from.zeroCount;
  for (const [i, n] of from.buckets) into.buckets.set(i, (into.buckets.get(i) ?? 0) + n);
}

/**
 * Quantiles of a histogram as k6 computes them on raw samples (k6 v2.2.0 `metrics/sink.go`
 * `TrendSink.P`: rank `q × (count − 1)`, linear between the two samples around it), the samples of
 * each bucket spread evenly over it on a log scale, as Prometheus interpolates native buckets
 * (`histogram_quantile`); 0 in the zero bucket. A lone sample sits at its bucket's midpoint (within
 * {@link bucketHalfWidth}); many samples of a continuous distribution land much closer, and the
 * worst case, every sample at one edge of a bucket, is the bucket's width (9% at schema 3).
 * @param qs fractions in [0, 1], ascending. @returns one value per `q`, in the histogram's unit.
 */
export function histogramQuantiles(h: NativeHistogram, qs: readonly number[]): number[] {
  const sorted = [...h.buckets].sort((x, y) => x[0] - y[0]);
  const n = h.zeroCount + sorted.reduce((a, [, c]) => a + c, 0);
  /**
   * The value of the k-th smallest sample (0-based): the `c` samples of a bucket spread evenly over
   * it on a log scale, the j-th at `(j + 0.5) / c` of the way (one sample: the midpoint).
   */
  const at = (k: number): number => {
    let seen = h.zeroCount;
    if (k < seen) return 0;
    for (const [i, c] of sorted) {
      if (k < seen + c) return bucketPoint(h.schema, i, (k - seen + 0.5) / c);
      seen += c;
    }
    return midpoint(h.schema, sorted.at(-1)?.[0] ?? 0);
  };
  return qs.map((q) => {
    if (n === 0) return Number.NaN;
    const rank = q * (n - 1);
    const lower = Math.floor(rank);
    const lo = at(lower);
    return lower + 1 >= n ? lo : lo + (at(lower + 1) - lo) * (rank - lower);
  });
}

/**
 * Collects the runners' pushes and returns, after the run, one series of per-interval percentiles
 * per tracked metric ({@link EXPECTED_DURATION} and the thresholds' trends). Pure: no clock, no I/O.
 */
export class IntervalLatencyRecorder {
  readonly #specs: Array<{ key: string; names: string[]; tags: Array<[string, string]> }>;
  readonly #pushIntervalMs: number;
  /** The last push of every (runner, series). */
  readonly #last = new Map<string, NativeHistogram>();
  readonly #deltas: IntervalDelta[] = [];
  #schema: number | undefined;

  constructor(options: IntervalLatencyOptions) {
    this.#pushIntervalMs = options.pushIntervalMs;
    const keys = [...new Set([EXPECTED_DURATION, ...options.metrics])];
    this.#specs = keys.map((key) => {
      const { name, tags } = parseMetricKey(key);
      return { key, names: [`k6_${name}_seconds`, `k6_${name}`], tags };
    });
  }

  /** Takes one decoded push of runner `runner` (0-based). */
  add(runner: number, series: readonly RemoteWriteSeries[]): void {
    for (const s of series) {
      if (s.histograms.length === 0) continue;
      const matching = this.#specs.filter(
        (spec) =>
          spec.names.includes(s.labels.__name__ ?? '') && spec.tags.every(([k, v]) => s.labels[k] === v),
      );
      if (matching.length === 0) continue;
      const id = `${runner}\u0000${Object.entries(s.labels)
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join('\u0000')}`;
      for (const h of s.histograms) {
        const previous = this.#last.get(id);
        if (previous && h.count <= previous.count) continue;
        this.#last.set(id, h);
        this.#schema ??= h.schema;
        const delta = subtractHistogram(h, previous);
        const fromMs = previous?.timestampMs ?? h.timestampMs - this.#pushIntervalMs;
        for (const spec of matching)
          this.#deltas.push({
            key: spec.key,
            fromMs,
            toMs: h.timestampMs,
            h: delta,
            seconds: s.labels.__name__ === spec.names[0],
          });
      }
    }
  }

  /**
   * Takes out the deltas recorded since the last call, in push order: a receiver in a runner Pod
   * merges each push's by key and prints them at its end (interval-lines.ts).
   */
  drain(): IntervalDelta[] {
    return this.#deltas.splice(0);
  }

  /**
   * Takes deltas recorded elsewhere (a runner Pod's receiver), their times moved by `shiftMs`
   * (from the runner's node clock to this machine's, ms). Keys not tracked here are kept: they
   * were tracked where they were recorded, from the same thresholds.
   * @throws Error when a delta's schema differs from the ones before (they could not be added).
   */
  addDeltas(deltas: readonly IntervalDelta[], shiftMs = 0): void {
    for (const d of deltas) {
      this.#schema ??= d.h.schema;
      if (d.h.schema !== this.#schema)
        throw new Error(`native histograms of schema ${this.#schema} and ${d.h.schema} cannot be added`);
      if (!this.#specs.some((s) => s.key === d.key)) this.#specs.push({ key: d.key, names: [], tags: [] });
      this.#deltas.push({ ...d, fromMs: d.fromMs + shiftMs, toMs: d.toMs + shiftMs });
    }
  }

  /** Whether any push held a tracked histogram. */
  get empty(): boolean {
    return this.#deltas.length === 0;
  }

  /**
   * The series on the grid `startedAtMs + k × intervalMs`: each push's delta counts in the interval
   * holding the middle of its span. From the first interval with samples to the last (never a
   * point before the first data); an interval between them without samples has `count` 0 and no
   * percentiles. Time metrics (`_seconds` series) are given in ms.
   */
  series(startedAtMs: number, intervalMs: number): IntervalLatencySeries | undefined {
    if (this.#schema === undefined) return undefined;
    const out: IntervalLatencySeries = {
      source: 'prometheus-rw-native-histograms',
      intervalS: intervalMs / 1000,
      bucketHalfWidth: round(bucketHalfWidth(this.#schema), 4),
      metrics: [],
    };
    for (const spec of this.#specs) {
      const slots = new Map<number, NativeHistogram>();
      let seconds = false;
      for (const d of this.#deltas) {
        if (d.key !== spec.key || d.h.count <= 0) continue;
        seconds ||= d.seconds;
        const mid = (d.fromMs + d.toMs) / 2;
        const slot = Math.max(0, Math.floor((mid - startedAtMs) / intervalMs));
        const into = slots.get(slot);
        if (into) addHistogram(into, d.h);
        else slots.set(slot, { ...d.h, buckets: new Map(d.h.buckets) });
      }
      if (slots.size === 0) continue;
      const first = Math.min(...slots.keys());
      const last = Math.max(...slots.keys());
      const scale = seconds ? 1000 : 1;
      const points: LatencyPoint[] = [];
      for (let k = first; k <= last; k++) {
        const h = slots.get(k);
        const point: LatencyPoint = { tS: round(((k + 1) * intervalMs) / 1000, 3), count: h?.count ?? 0 };
        if (h && h.count > 0) {
          const [p50, p90, p95, p99] = histogramQuantiles(h, [0.5, 0.9, 0.95, 0.99]).map((v) =>
            round(v * scale, 3),
          );
          Object.assign(point, { p50: p50!, p90: p90!, p95: p95!, p99: p99! });
        }
        points.push(point);
      }
      out.metrics.push({ metric: spec.key, unit: seconds ? 'ms' : 'value', points });
    }
    return out.metrics.length > 0 ? out : undefined;
  }
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** The interval lengths a latency series may have, ms. */
const STEPS_MS = [200, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000];

/**
 * The adaptive interval and push interval for a test of `totalDurationS` (k6 inspect's
 * totalDuration, s): the longest step that still gives 60 intervals or more (200 ms at least), and a push
 * ten times per interval (20 ms to 1 s), so that a push's span, which counts whole in the
 * interval holding its middle, is at most a tenth of an interval.
 * @returns both in ms.
 */
export function latencyIntervals(totalDurationS: number): { intervalMs: number; pushIntervalMs: number } {
  const ms = Math.max(0, totalDurationS) * 1000;
  let intervalMs = STEPS_MS[0]!;
  for (const step of STEPS_MS) if (ms / step >= 60) intervalMs = step;
  return { intervalMs, pushIntervalMs: Math.min(1000, Math.max(20, Math.round(intervalMs / 10))) };
}
