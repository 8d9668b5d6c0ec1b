import { COMPACT_SUMMARY_FORMAT, compactFromDocument, readCompactSummary } from './compact-summary-read.ts';
import {
  num,
  percentileFraction,
  type Raw,
  type RunnerMetric,
  type RunnerSummary,
  runnerSummary,
  trendMetric,
  valueMetric,
} from './summary-metric.ts';

export type { RunnerMetric, RunnerSummary };
export { COMPACT_SUMMARY_FORMAT };

/** `(` in `p(…)`: keys that start `p(` are percentiles; the others are skipped without a lookup. */
const OPEN_PAREN = 40;
const P = 112;

/** Reused while reading one trend's percentiles. */
let scratchF = new Float64Array(256);
let scratchV = new Float64Array(256);
function growScratch(): void {
  const f = new Float64Array(scratchF.length * 2);
  const v = new Float64Array(scratchV.length * 2);
  f.set(scratchF);
  v.set(scratchV);
  scratchF = f;
  scratchV = v;
}

/**
 * Sorts the first `n` scratch points by fraction, in place. Insertion sort: the keys come in the
 * order of `--summary-trend-stats`, sorted but for a few threshold percentiles appended at the end.
 */
function sortScratch(n: number): void {
  for (let i = 1; i < n; i++) {
    const f = scratchF[i]!;
    const v = scratchV[i]!;
    let j = i - 1;
    while (j >= 0 && scratchF[j]! > f) {
      scratchF[j + 1] = scratchF[j]!;
      scratchV[j + 1] = scratchV[j]!;
      j--;
    }
    scratchF[j + 1] = f;
    scratchV[j + 1] = v;
  }
}

function parseMetric(name: string, raw: Raw): RunnerMetric {
  if ('avg' in raw) {
    // Hot path: 1,000 runners × 20 trends × ~170 keys. Only `p(…)` keys are looked up, and the
    // points are packed into two typed arrays (pairs would be millions of small allocations).
    let n = 0;
    let sorted = true;
    let last = -1;
    for (const key in raw) {
      if (key.charCodeAt(0) !== P || key.charCodeAt(1) !== OPEN_PAREN) continue;
      const value = raw[key];
      const fraction = percentileFraction(key);
      if (fraction === undefined || typeof value !== 'number') continue;
      if (fraction < last) sorted = false;
      last = fraction;
      if (n === scratchF.length) growScratch();
      scratchF[n] = fraction;
      scratchV[n] = value;
      n++;
    }
    if (!('count' in raw))
      throw new Error(`summary of trend ${name} has no count; the runner did not get the trend stats`);
    if (!sorted) sortScratch(n);
    return trendMetric(
      [num(raw, 'count'), num(raw, 'min'), num(raw, 'max'), num(raw, 'avg')],
      scratchF.slice(0, n),
      scratchV.slice(0, n),
    );
  }
  // The export has no types: a rate has passes/fails, a gauge value, a counter count.
  const type =
    'passes' in raw || 'fails' in raw ? 'rate' : 'value' in raw ? 'gauge' : 'count' in raw ? 'counter' : '';
  if (!type) throw new Error(`summary metric ${name} has an unknown shape: ${Object.keys(raw).join(', ')}`);
  return valueMetric(name, type, raw);
}

/**
 * Parses a runner's summary, from its text or its UTF-8 bytes (as a local runner's file is read):
 * the compact one its entry module's handleSummary writes (`compactSummary` in
 * src/k6/compact-summary.ts, read by `readCompactSummary`), or k6's own `--summary-export` (the
 * fallback when handleSummary did not write, e.g. a script whose `handleSummaryTimeout` was too
 * short).
 * @throws Error when the JSON is neither, or is a compact summary of another format (a runner of
 *   another k6-distributed version).
 */
export function parseRunnerSummary(input: string | Uint8Array): RunnerSummary {
  const compact = readCompactSummary(input);
  if (compact) return compact;
  const doc = JSON.parse(typeof input === 'string' ? input : Buffer.from(input).toString('utf8')) as Raw;
  if (!doc || typeof doc.metrics !== 'object' || doc.metrics === null) {
    throw new Error('not a k6 summary export: no "metrics" object');
  }
  if (doc.format === COMPACT_SUMMARY_FORMAT) return compactFromDocument(doc);
  if (typeof doc.format === 'string' && doc.format.startsWith('k6d-summary/'))
    throw new Error(
      `compact summary of format ${doc.format}, not ${COMPACT_SUMMARY_FORMAT} (a runner of another k6-distributed version?)`,
    );
  const metrics: Record<string, RunnerMetric> = {};
  for (const [name, raw] of Object.entries(doc.metrics as Record<string, Raw>)) {
    metrics[name] = parseMetric(name, raw);
  }
  return runnerSummary(metrics, (doc.root_group ?? {}) as Raw, true);
}
