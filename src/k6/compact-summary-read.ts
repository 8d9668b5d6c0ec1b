import {
  percentileFraction,
  type Raw,
  type RunnerMetric,
  type RunnerSummary,
  runnerSummary,
  trendMetric,
  valueMetric,
} from './summary-metric.ts';

/**
 * The `format` of the compact runner summary (`compactSummary` in src/k6/compact-summary.ts, which
 * writes the string itself: it runs inside k6, where it cannot import this).
 */
export const COMPACT_SUMMARY_FORMAT = 'k6d-summary/3';

/** Where a compact trend's stats are in its row, for one `stats` list. */
interface CompactLayout {
  /** The number of stats in a row. */
  size: number;
  /** Index of each percentile, ascending by fraction. */
  index: Int32Array;
  /** The percentiles' fractions (shared, read-only, by every grid of this layout). */
  fractions: Float64Array;
  count: number;
  min: number;
  max: number;
  avg: number;
  /**
   * The stats hold `min, p(…) ascending, max` in a row (summaryTrendStats in plan.ts orders them
   * so): a trend's knots are then a view of its row, nothing is copied.
   */
  contiguous: boolean;
}

function compactLayout(stats: readonly string[]): CompactLayout {
  const found: Array<[number, number]> = [];
  stats.forEach((stat, i) => {
    const fraction = percentileFraction(stat);
    if (fraction !== undefined) found.push([fraction, i]);
  });
  found.sort((a, b) => a[0] - b[0]);
  const min = stats.indexOf('min');
  const max = stats.indexOf('max');
  return {
    size: stats.length,
    index: Int32Array.from(found, ([, i]) => i),
    fractions: Float64Array.from(found, ([f]) => f),
    count: stats.indexOf('count'),
    min,
    max,
    avg: stats.indexOf('avg'),
    contiguous: min >= 0 && max === min + found.length + 1 && found.every(([, i], k) => i === min + 1 + k),
  };
}

/**
 * The last `stats` list read (its JSON text) and its layout: every runner of a run has the same
 * one, so 1,000 runners parse it once and compare 999 times (a ~10 KB memcmp each).
 */
let lastStats: { text: string; layout: CompactLayout } | undefined;

function layoutOf(statsJson: string): CompactLayout {
  if (lastStats?.text === statsJson) return lastStats.layout;
  const stats: unknown = JSON.parse(statsJson);
  if (!Array.isArray(stats)) throw new Error('compact summary has no "stats" list');
  const layout = compactLayout(stats.map(String));
  lastStats = { text: statsJson, layout };
  return layout;
}

/** The compact summary's text up to its stats list, and the marks around its parts. */
const HEAD = `{\n "format": "${COMPACT_SUMMARY_FORMAT}",\n "stats": `;
const METRICS_MARK = ',\n "metrics": {';
const TRENDS_MARK = ',\n "trends": [\n';
const TRENDS_END = '\n ]\n}';

/** A summary's bytes or text, read the same way (the bytes stay bytes but for the small head). */
interface Source {
  length: number;
  indexOf(mark: string, from?: number): number;
  lastIndexOf(mark: string): number;
  /** The text of `[start, end)` (UTF-8 decoded from bytes). */
  text(start: number, end: number): string;
  /** Base64 of `[start, end)` (ASCII) decoded into `into` from byte `at`; the bytes written. */
  base64(start: number, end: number, into: Buffer, at: number): number;
}

function sourceOf(input: string | Uint8Array): Source {
  if (typeof input === 'string') {
    return {
      length: input.length,
      indexOf: (mark, from) => input.indexOf(mark, from),
      lastIndexOf: (mark) => input.lastIndexOf(mark),
      text: (start, end) => input.slice(start, end),
      base64: (start, end, into, at) => into.write(input.slice(start, end), at, 'base64'),
    };
  }
  const bytes = Buffer.isBuffer(input)
    ? input
    : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  return {
    length: bytes.length,
    indexOf: (mark, from) => bytes.indexOf(mark, from),
    lastIndexOf: (mark) => bytes.lastIndexOf(mark),
    text: (start, end) => bytes.toString('utf8', start, end),
    base64: (start, end, into, at) => into.write(bytes.toString('latin1', start, end), at, 'base64'),
  };
}

/**
 * Reads a compact runner summary (`compactSummary` in src/k6/compact-summary.ts) from its text or
 * its UTF-8 bytes: the head (metrics and groups) by JSON.parse, the stats list only when it is not
 * the previous runner's, and the trends' base64 lines decoded one by one straight into one
 * Float64Array whose rows the trends' grids view.
 * @returns undefined when the input does not start as a compact summary of this format does (then
 *   it is k6's export, or another format: see `parseRunnerSummary`).
 * @throws Error naming what is wrong when it starts as one but is not whole.
 */
export function readCompactSummary(input: string | Uint8Array): RunnerSummary | undefined {
  const src = sourceOf(input);
  if (src.length < HEAD.length || src.text(0, HEAD.length) !== HEAD) return undefined;
  const metricsAt = src.indexOf(METRICS_MARK, HEAD.length);
  const trendsAt = metricsAt < 0 ? -1 : src.indexOf(TRENDS_MARK, metricsAt);
  const end = src.lastIndexOf(TRENDS_END);
  if (metricsAt < 0 || trendsAt < metricsAt || end < trendsAt + TRENDS_MARK.length - 1)
    throw new Error('compact summary is cut short: no "metrics" or no "trends" lines');
  const layout = layoutOf(src.text(HEAD.length, metricsAt));
  const head = JSON.parse(`{${src.text(metricsAt + 2, trendsAt)}}`) as Raw;
  // The base64 strings, one a line (`  "…",`), each decoded on its own (all but the last are a
  // multiple of 4 characters long).
  const lines: Array<[number, number]> = [];
  let chars = 0;
  for (let at = trendsAt + TRENDS_MARK.length; at < end; ) {
    const open = src.indexOf('"', at);
    const close = open < 0 ? -1 : src.indexOf('"', open + 1);
    if (open < 0 || close < 0 || close > end)
      throw new Error('compact summary\'s "trends" lines are cut short');
    lines.push([open + 1, close]);
    chars += close - open - 1;
    at = close + 1;
  }
  return assemble(layout, head, chars, (into) => {
    let written = 0;
    for (const [from, to] of lines) written += src.base64(from, to, into, written);
    return written;
  });
}

/**
 * A compact summary already parsed as a whole JSON document (the fallback of `parseRunnerSummary`,
 * for a text whose lines are not as {@link compactSummary} writes them, e.g. with CRLF line ends).
 * @throws Error naming what is wrong.
 */
export function compactFromDocument(doc: Raw): RunnerSummary {
  if (!Array.isArray(doc.stats)) throw new Error('compact summary has no "stats" list');
  const trends = Array.isArray(doc.trends) ? doc.trends.join('') : '';
  return assemble(compactLayout(doc.stats.map(String)), doc, trends.length, (into) =>
    into.write(trends, 0, 'base64'),
  );
}

/**
 * The summary of a compact head (`metrics`, `root_group`) and its trends' base64 lines, `chars` in all
 * characters, which `decode` writes into the rows' bytes (returning how many it wrote).
 */
function assemble(
  layout: CompactLayout,
  head: Raw,
  chars: number,
  decode: (into: Buffer) => number,
): RunnerSummary {
  const rawMetrics = (head.metrics ?? {}) as Record<string, Raw>;
  const names = Object.keys(rawMetrics);
  let rows = 0;
  for (const name of names) if (rawMetrics[name]!.type === 'trend') rows++;
  const values = rowsOf(rows * layout.size);
  const shape = `${rows} trends × ${layout.size} stats`;
  if (chars !== Math.ceil(values.byteLength / 3) * 4)
    throw new Error(`compact summary's trends lines have ${chars} characters for ${shape}`);
  const written = decode(Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  if (written !== values.byteLength)
    throw new Error(`compact summary's trends lines hold ${written} bytes for ${shape}`);
  const metrics: Record<string, RunnerMetric> = {};
  for (const name of names) metrics[name] = compactMetric(name, rawMetrics[name]!, layout, values, rows);
  return runnerSummary(metrics, (head.root_group ?? {}) as Raw, false);
}

/** Float64s handed out by {@link rowsOf}, a slab at a time. */
let slab = new Float64Array(0);
let slabUsed = 0;
/**
 * Floats per slab at most (16 MiB): 1,000 runners' rows take ~14 slabs instead of 1,000
 * allocations. The first is 1 MiB and each next one twice the last: 16 MiB at once made V8 count
 * that much external memory for 10 runners' 1.5 MiB of rows, which can start a full GC early.
 */
const SLAB = 1 << 21;

/**
 * `length` float64s for one summary's rows, cut from a slab: with one 155 KiB allocation per
 * runner the collect of 1,000 runners took ~7% more CPU (398 against 370 ms, median of 5
 * alternated processes). Every float is written by the decode (its length is checked), so the
 * slab's memory needs no clearing.
 */
function rowsOf(length: number): Float64Array {
  if (length > SLAB) return new Float64Array(length);
  if (slabUsed + length > slab.length) {
    slab = new Float64Array(Math.max(length, Math.min(SLAB, Math.max(1 << 17, slab.length * 2))));
    slabUsed = 0;
  }
  const rows = slab.subarray(slabUsed, slabUsed + length);
  slabUsed += length;
  return rows;
}

function compactMetric(
  name: string,
  raw: Raw,
  layout: CompactLayout,
  values: Float64Array,
  rows: number,
): RunnerMetric {
  if (raw.type !== 'trend') return valueMetric(name, raw.type, (raw.values ?? {}) as Raw);
  const row = raw.values;
  if (typeof row !== 'number' || !Number.isInteger(row) || row < 0 || row >= rows)
    throw new Error(`compact summary of trend ${name} has no row in "trends": ${JSON.stringify(row)}`);
  if (layout.count < 0)
    throw new Error(`summary of trend ${name} has no count; the runner did not get the trend stats`);
  const base = row * layout.size;
  const at = (i: number): number => {
    const v = values[base + i]!;
    return Number.isFinite(v) ? v : 0;
  };
  const head: [number, number, number, number] = [
    at(layout.count),
    at(layout.min),
    at(layout.max),
    at(layout.avg),
  ];
  const { index, fractions } = layout;
  if (layout.contiguous) {
    return trendMetric(
      head,
      fractions,
      values.subarray(base + layout.min + 1, base + layout.max),
      values.subarray(base + layout.min, base + layout.max + 1),
    );
  }
  const points = new Float64Array(index.length);
  // A stat k6 did not give is NaN, skipped by the merge.
  for (let i = 0; i < index.length; i++) points[i] = values[base + index[i]!]!;
  return trendMetric(head, fractions, points);
}
