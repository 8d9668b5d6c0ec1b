/**
 * The log lines in which a runner Pod's interval receiver (src/backends/kubernetes/receiver/)
 * hands its per-interval histogram deltas to the orchestrator, which reads its log once at the end
 * (docs/how-it-works.md "Latency over time, per interval"). Pure: no I/O.
 *
 * Lines, each on its own (no line is longer than one delta's buckets, a few hundred bytes):
 * - `k6d-iv-keys ["<metric key>", …]`: the tracked metric keys, once, before any delta;
 * - `k6d-iv [k, fromMs, toMs, seconds, schema, zeroThreshold, zeroCount, count, sum, i0, c0, i1, c1, …]`:
 *   one delta ({@link IntervalDelta}) of key number `k`, `seconds` 1 for a time trend, then each
 *   non-empty bucket's index and count;
 * - `k6d-iv-end {"pushes": n, "refused": n, "error"?: "…"}`: last, so a log
 *   without it was cut short.
 */

import type { IntervalDelta } from './interval-latency.ts';
import { addHistogram } from './interval-latency.ts';

/** The prefixes of the receiver's lines. */
export const IV_LINES = { keys: 'k6d-iv-keys ', delta: 'k6d-iv ', end: 'k6d-iv-end ' } as const;

/** What the receiver says at its end. */
export interface ReceiverEnd {
  /** Pushes taken from k6. */
  pushes: number;
  /** Pushes refused (not a remote-write body); their samples are missing. */
  refused: number;
  /**
   * It began listening after its runner's test had started (k6's status at or past `Started`): k6's
   * first pushes may have found nobody, and a push lost makes the next one look like one
   * interval's samples.
   */
  late?: boolean;
  /** Why it could not receive at all (e.g. its port was taken), when so. */
  error?: string;
}

/**
 * Merges one push's deltas by metric key: a tracked key matches several series (one per tag set,
 * e.g. per URL), and a receiver that printed each would print one line per series and push. The
 * merged span runs from the earliest series' previous push to the latest sample time.
 * @throws Error when two of them have different schemas (addHistogram).
 */
export function mergeByKey(deltas: readonly IntervalDelta[]): IntervalDelta[] {
  const merged = new Map<string, IntervalDelta>();
  for (const d of deltas) {
    const into = merged.get(d.key);
    if (!into) {
      merged.set(d.key, { ...d, h: { ...d.h, buckets: new Map(d.h.buckets) } });
      continue;
    }
    addHistogram(into.h, d.h);
    into.fromMs = Math.min(into.fromMs, d.fromMs);
    into.toMs = Math.max(into.toMs, d.toMs);
    into.h.timestampMs = into.toMs;
    into.seconds ||= d.seconds;
  }
  return [...merged.values()];
}

/** The receiver's lines for `deltas` and its end, in order (without newlines). */
export function encodeIntervalLines(deltas: readonly IntervalDelta[], end: ReceiverEnd): string[] {
  const keys: string[] = [];
  const lines: string[] = [];
  for (const d of deltas) {
    let k = keys.indexOf(d.key);
    if (k < 0) k = keys.push(d.key) - 1;
    const { h } = d;
    const row: number[] = [k, d.fromMs, d.toMs, d.seconds ? 1 : 0, h.schema, h.zeroThreshold, h.zeroCount];
    row.push(h.count, h.sum);
    for (const [i, c] of [...h.buckets].sort((a, b) => a[0] - b[0])) row.push(i, c);
    lines.push(IV_LINES.delta + JSON.stringify(row));
  }
  return [IV_LINES.keys + JSON.stringify(keys), ...lines, IV_LINES.end + JSON.stringify(end)];
}

/**
 * Reads the receiver's lines out of its log (other lines are ignored).
 * @returns the deltas, and its end line when there was one (none: the log was cut short, or the
 *   receiver never got to its end).
 * @throws Error naming the line that is malformed.
 */
export function decodeIntervalLines(log: string): { deltas: IntervalDelta[]; end?: ReceiverEnd } {
  let keys: string[] = [];
  const deltas: IntervalDelta[] = [];
  let end: ReceiverEnd | undefined;
  for (const line of log.split('\n')) {
    if (line.startsWith(IV_LINES.keys)) keys = parse(line, IV_LINES.keys) as string[];
    else if (line.startsWith(IV_LINES.end)) end = parse(line, IV_LINES.end) as ReceiverEnd;
    else if (line.startsWith(IV_LINES.delta)) {
      const row = parse(line, IV_LINES.delta);
      const key = Array.isArray(row) ? keys[row[0] as number] : undefined;
      if (!Array.isArray(row) || row.length < 9 || row.length % 2 === 0 || key === undefined)
        throw new Error(`malformed receiver line: ${line.slice(0, 80)}`);
      const [, fromMs, toMs, seconds, schema, zeroThreshold, zeroCount, count, sum] = row as number[];
      const buckets = new Map<number, number>();
      for (let i = 9; i < row.length; i += 2) buckets.set(row[i]!, row[i + 1]!);
      deltas.push({
        key,
        fromMs: fromMs!,
        toMs: toMs!,
        seconds: seconds === 1,
        h: {
          timestampMs: toMs!,
          schema: schema!,
          zeroThreshold: zeroThreshold!,
          zeroCount: zeroCount!,
          count: count!,
          sum: sum!,
          buckets,
        },
      });
    }
  }
  return end ? { deltas, end } : { deltas };
}

function parse(line: string, prefix: string): unknown {
  try {
    return JSON.parse(line.slice(prefix.length));
  } catch {
    throw new Error(`malformed receiver line: ${line.slice(0, 80)}`);
  }
}
