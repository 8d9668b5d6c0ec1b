/**
 * The runner's side of the compact summary: the function the runner entry module (src/k6/entry.ts)
 * embeds as its `handleSummary`, which writes what the orchestrator reads back
 * (`parseRunnerSummary` in src/k6/summary.ts, format `COMPACT_SUMMARY_FORMAT` there).
 */

/**
 * The compact runner summary, built inside k6 by the runner entry module's `handleSummary(data)`
 * (src/k6/entry.ts embeds this function's source, so it must stay plain JavaScript that k6's
 * runtime runs: no imports, nothing from outside). It carries what `--summary-export` carries, in
 * a shape that parses several times faster: a trend's stats are the float64s of
 * `data.options.summaryTrendStats` (the runner's `--summary-trend-stats`) in that order, named once
 * in `stats`, packed little-endian and base64-encoded (a stat the data lacks is NaN), instead of
 * ~300 `"p(…)": value` keys per trend. Packed, the values stay exact and JSON.parse reads one
 * string instead of 300 numbers: at 1,000 runners parsing k6's export alone took about 600 ms of
 * the 1 s budget (bench/scale.ts). Other metrics keep k6's `values` object.
 *
 * Layout, so that it is read back from a Pod log as the export is (`extractSummary`): `{` and `}`
 * alone on their lines, every line between them indented, one metric a line.
 * @param data k6's handleSummary data object (`metrics[name] = {type, contains, values}`, `root_group`, `options`).
 * @param b64encode base64 (standard alphabet) of an ArrayBuffer: `b64encode` of k6/encoding inside
 *   k6, `Buffer.from(buffer).toString('base64')` in Node.
 * @returns `{format, stats, metrics: {name: {type, contains, values}}, root_group}` as JSON text.
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
  // The format string is written out (this function cannot see COMPACT_SUMMARY_FORMAT inside k6).
  const lines = ['{', ' "format": "k6d-summary/2",', ` "stats": ${JSON.stringify(stats)},`, ' "metrics": {'];
  // Typed arrays hold numbers in the platform's order; k6 and Node run on little-endian CPUs
  // (amd64, arm64), and the parser checks the length.
  const entries = Object.entries(data.metrics).map(([name, m]) => {
    let values: Record<string, number> | string = m.values;
    if (m.type === 'trend') {
      // A plain loop over a local: k6's JS engine runs it about 3 times as fast as
      // Float64Array.from with a callback (9 trends of 972 stats: 7.6 ms against 21 ms).
      const known = m.values;
      const packed = new Float64Array(stats.length);
      for (let i = 0; i < stats.length; i++) {
        const v = known[stats[i]!];
        packed[i] = typeof v === 'number' ? v : Number.NaN;
      }
      values = b64encode(packed.buffer);
    }
    return `  ${JSON.stringify(name)}: ${JSON.stringify({ type: m.type, contains: m.contains, values: values })}`;
  });
  if (entries.length > 0) lines.push(entries.join(',\n'));
  lines.push(' },');
  const group = JSON.stringify(data.root_group || {}, null, 1)
    .split('\n')
    .join('\n ');
  lines.push(` "root_group": ${group}`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
