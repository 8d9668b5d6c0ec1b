/**
 * The truth for per-interval percentiles: k6's own raw samples (`--out json`, one file per runner),
 * binned on the result's latency grid by each sample's own time, with k6's percentile definition.
 * Shared by test/e2e/interval-latency.test.ts and bench/timeline.ts.
 */
import { readFileSync } from 'node:fs';
import { exactPercentile } from '../../src/result/quantiles.ts';
import type { IntervalLatency } from '../../src/result/timeline-schema.ts';

/** A raw sample of `--out json` (`type: "Point"` lines). */
interface RawPoint {
  metric: string;
  type: string;
  data: { time: string; value: number; tags?: Record<string, string> };
}

/** One interval compared: ours and the raw samples'. */
export interface IntervalComparison {
  tS: number;
  rawCount: number;
  ourCount: number;
  /** Percentile → [ours, raw, relative error ours/raw − 1]. */
  p: Record<'p50' | 'p90' | 'p95' | 'p99', [number, number, number]>;
}

/**
 * Compares one metric series of the result's `latency` with the raw samples of `files`.
 * @param metric the metric name (e.g. `http_req_duration`); `tags` every tag a sample must have.
 * @param startedAtMs the run's synchronised start, epoch ms (the grid's time 0).
 */
export function compareWithRaw(
  latency: IntervalLatency,
  key: string,
  files: readonly string[],
  metric: string,
  tags: Record<string, string>,
  startedAtMs: number,
): IntervalComparison[] {
  const intervalMs = latency.intervalS * 1000;
  const slots = new Map<number, number[]>();
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes('"Point"') || !line.includes(`"${metric}"`)) continue;
      const p = JSON.parse(line) as RawPoint;
      if (p.type !== 'Point' || p.metric !== metric) continue;
      if (!Object.entries(tags).every(([k, v]) => p.data.tags?.[k] === v)) continue;
      const slot = Math.floor((Date.parse(p.data.time) - startedAtMs) / intervalMs);
      const list = slots.get(slot) ?? [];
      list.push(p.data.value);
      slots.set(slot, list);
    }
  }
  const series = latency.metrics.find((m) => m.metric === key);
  if (!series) throw new Error(`no latency series ${key}`);
  const out: IntervalComparison[] = [];
  for (const point of series.points) {
    const slot = Math.round((point.tS * 1000) / intervalMs) - 1;
    const raw = (slots.get(slot) ?? []).sort((a, b) => a - b);
    if (point.p50 === undefined || raw.length === 0) continue;
    const p = {} as IntervalComparison['p'];
    for (const [name, percent] of [
      ['p50', 50],
      ['p90', 90],
      ['p95', 95],
      ['p99', 99],
    ] as const) {
      const ours = point[name]!;
      const truth = exactPercentile(raw, percent);
      p[name] = [ours, truth, truth > 0 ? ours / truth - 1 : 0];
    }
    out.push({ tS: point.tS, rawCount: raw.length, ourCount: point.count, p });
  }
  return out;
}

/**
 * A test at 200 req/s (`__ENV.RATE` to change), 12 s unless `__ENV.DURATION` (whole seconds) says
 * otherwise; latency steps from 5–25 ms to 30–50 ms halfway. Tags `name: slow` (≥ 30 ms) and
 * `fast`, and a threshold on `http_req_duration{name:slow}`.
 */
export const STEP_SCRIPT = `
import http from 'k6/http';
import exec from 'k6/execution';
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE || 200), timeUnit: '1s', duration: __ENV.DURATION || '12s',
    preAllocatedVUs: 60, gracefulStop: '1s' } },
  thresholds: { 'http_req_duration{name:slow}': ['p(95)<1000'] },
};
export default function () {
  const half = (__ENV.DURATION ? parseInt(__ENV.DURATION) : 12) * 500;
  const base = exec.instance.currentTestRunDuration > half ? 30 : 5;
  const ms = base + Math.floor(Math.random() * 20);
  http.get(__ENV.TARGET + '/slow?ms=' + ms, { tags: { name: ms >= 30 ? 'slow' : 'fast' } });
}
`;
