/**
 * The runner's side of the compact summary: the function the runner entry module (src/k6/entry.ts)
 * embeds as its `handleSummary`, which writes what the orchestrator reads back
 * (`readCompactSummary` in src/k6/compact-summary-read.ts, format `COMPACT_SUMMARY_FORMAT` there).
 */

/**
 * The characters of each base64 string of the compact summary's `"trends"` list but the last: a
 * multiple of 4, so that each decodes on its own, and with its quotes, comma and indent well under
 * the 16 KiB at which containerd (`max_container_log_line_size`) and Docker split a log line.
 */
export const TRENDS_CHUNK = 8192;

/**
 * The compact runner summary, built inside k6 by the runner entry module's `handleSummary(data)`
 * (src/k6/entry.ts embeds this function's source, so it must stay plain JavaScript that k6's
 * runtime runs: no imports, nothing from outside). It carries what `--summary-export` carries, in
 * a shape the orchestrator reads without parsing the bulk of it: every trend's stats are the
 * float64s of `data.options.summaryTrendStats` (the runner's `--summary-trend-stats`) in that
 * order, named once in `stats`; all trends' rows are packed little-endian into one array,
 * base64-encoded last (`"trends"`, a list of {@link TRENDS_CHUNK}-character strings, one a line),
 * and a trend's `values` is its row number there (a stat the data lacks is NaN). The orchestrator
 * JSON-parses the small head (no stats list when it is the previous runner's) and decodes the
 * base64 lines straight into the rows: at 1,000
 * runners × 20 trends × 972 stats, JSON.parse of the same values as strings inside the document
 * (format 2) was half of the collect stage (bench/results/scale.md). Other metrics keep k6's
 * `values` object. The whole text stays one JSON document (`JSON.parse` reads it, the fallback).
 *
 * Layout, so that it is read back from a Pod log as the export is (`extractSummary`): `{` and `}`
 * alone on their lines, every line between them indented, one metric a line; `"stats"` the second
 * key and `"trends"` the last, each on its own line with one space of indent (the reader finds them
 * by `\n "stats": ` and `\n "trends": [\n`, which no JSON string can hold: a newline in one is
 * `\n`), the trends' base64 strings two spaces in, one a line, and ` ]` alone on the line before
 * `}`. No line is longer than 16 KiB, so that a container runtime never splits one (containerd
 * and Docker cut longer lines into partial ones, and a Pod log then interleaves a line of k6's
 * stderr between the parts of one stdout line).
 * @param data k6's handleSummary data object (`metrics[name] = {type, contains, values}`, `root_group`, `options`).
 * @param b64encode base64 (standard alphabet) of an ArrayBuffer: `b64encode` of k6/encoding inside
 *   k6, `Buffer.from(buffer).toString('base64')` in Node.
 * @returns `{format, stats, metrics: {name: {type, contains, values}}, root_group, trends}` as JSON text.
 */
export function compactSummary(
  data: {
    metrics: Record<string, { type: string; contains?: string; values: Record<string, number> }>;
    root_group?: unknown;
    options?: { summaryTrendStats?: string[] };
  },
  b64encode: (buffer: ArrayBuffer) => string,
): string {
  const stats = data.options?.summaryTrendStats ?? [];
  const names = Object.keys(data.metrics);
  let trends = 0;
  for (let i = 0; i < names.length; i++) if (data.metrics[names[i]!]!.type === 'trend') trends++;
  // Typed arrays hold numbers in the platform's order; k6 and Node run on little-endian CPUs
  // (amd64, arm64), and the reader checks the length.
  const packed = new Float64Array(trends * stats.length);
  let row = 0;
  // The format string is written out (this function cannot see COMPACT_SUMMARY_FORMAT inside k6).
  const lines = ['{', ' "format": "k6d-summary/3",', ` "stats": ${JSON.stringify(stats)},`, ' "metrics": {'];
  const entries = names.map((name) => {
    const m = data.metrics[name]!;
    let values: Record<string, number> | number = m.values;
    if (m.type === 'trend') {
      // A plain loop over locals: k6's JS engine runs it about 3 times as fast as
      // Float64Array.from with a callback (9 trends of 972 stats: 7.6 ms against 21 ms).
      const known = m.values;
      const base = row * stats.length;
      for (let i = 0; i < stats.length; i++) {
        const v = known[stats[i]!];
        packed[base + i] = typeof v === 'number' ? v : Number.NaN;
      }
      values = row++;
    }
    return `  ${JSON.stringify(name)}: ${JSON.stringify({ type: m.type, contains: m.contains, values: values })}`;
  });
  if (entries.length > 0) lines.push(entries.join(',\n'));
  lines.push(' },');
  const group = JSON.stringify(data.root_group || {}, null, 1)
    .split('\n')
    .join('\n ');
  lines.push(` "root_group": ${group},`);
  // TRENDS_CHUNK (8,192) is written out: this function cannot see the constant inside k6.
  const base64 = b64encode(packed.buffer);
  const chunks = [];
  for (let at = 0; at < base64.length; at += 8192) chunks.push(`  "${base64.slice(at, at + 8192)}"`);
  lines.push(' "trends": [');
  if (chunks.length > 0) lines.push(chunks.join(',\n'));
  lines.push(' ]');
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
