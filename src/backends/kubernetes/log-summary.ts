import { COMPACT_SUMMARY_FORMAT } from '../../k6/summary.ts';

/**
 * Splits a runner's Pod log into its summary and the rest (k6's own lines). Two summaries may be
 * there, both written to stdout as indented JSON (`{` and `}` alone on their lines, every line in
 * between indented): the compact one of the entry module's handleSummary (`format`
 * {@link COMPACT_SUMMARY_FORMAT}), which is preferred, and k6's `--summary-export`, the fallback.
 * A Pod log merges stdout and stderr line by line in arrival order, so a log line of k6's (never
 * indented) may land inside a block and is set aside. Of each kind the last block that parses as a
 * summary (it has `metrics`) counts; the lines of both are left out of the rest.
 * @returns `summary` with its `format` (`compact` or `export`) when the log holds a whole one.
 */
export function extractSummary(log: string): {
  summary?: string;
  format?: 'compact' | 'export';
  rest: string;
} {
  const lines = log.split('\n');
  const used = new Set<number>();
  let compact: string | undefined;
  let exported: string | undefined;
  for (
    let start = lines.lastIndexOf('{');
    start >= 0 && compact === undefined;
    start = start > 0 ? lines.lastIndexOf('{', start - 1) : -1
  ) {
    if (used.has(start)) continue;
    const body = ['{'];
    const block = [start];
    for (let i = start + 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === '}' || line === '}\r') {
        body.push('}');
        block.push(i);
        try {
          const parsed = JSON.parse(body.join('\n')) as { metrics?: unknown; format?: unknown };
          if (parsed && typeof parsed === 'object' && parsed.metrics) {
            for (const j of block) used.add(j);
            if (parsed.format === COMPACT_SUMMARY_FORMAT) compact = body.join('\n');
            else exported ??= body.join('\n');
          }
        } catch {
          // not a summary: look further up
        }
        break;
      }
      if (/^\s/.test(line)) {
        body.push(line);
        block.push(i);
      }
    }
  }
  const summary = compact ?? exported;
  if (summary === undefined) return { rest: log };
  return {
    summary,
    format: compact === undefined ? 'export' : 'compact',
    rest: lines.filter((_, j) => !used.has(j)).join('\n'),
  };
}
