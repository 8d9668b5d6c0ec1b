/**
 * Prometheus remote-write bodies for tests, as k6's `experimental-prometheus-rw` output sends them:
 * protobuf (written with @bufbuild/protobuf's wire writer) in a snappy block (snappyjs).
 */
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { compress } from 'snappyjs';

/**
 * A WriteRequest of one series holding one native histogram (schema 3) of `values` (in s), cumulative
 * as k6 sends it, taken at `timestampMs`; snappy-compressed.
 */
export function histogramPush(
  labels: Record<string, string>,
  values: number[],
  timestampMs: number,
): Uint8Array {
  const counts = new Map<number, number>();
  for (const v of values) {
    const i = Math.ceil(Math.log2(v) * 8);
    counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  const indexes = [...counts.keys()].sort((a, b) => a - b);
  const h = new BinaryWriter()
    .tag(1, 0)
    .uint64(values.length)
    .tag(3, 1)
    .double(values.reduce((a, b) => a + b, 0))
    .tag(4, 0)
    .sint32(3)
    .tag(15, 0)
    .int64(timestampMs);
  // One span per bucket: offset from the end of the previous span.
  let end = 0;
  for (const [k, i] of indexes.entries()) {
    h.tag(11, 2)
      .fork()
      .tag(1, 0)
      .sint32(k === 0 ? i : i - end)
      .tag(2, 0)
      .uint32(1)
      .join();
    end = i + 1;
  }
  h.tag(12, 2).fork();
  let previous = 0;
  for (const i of indexes) {
    h.sint64(counts.get(i)! - previous);
    previous = counts.get(i)!;
  }
  h.join();
  const series = new BinaryWriter();
  for (const [name, value] of Object.entries(labels))
    series.tag(1, 2).bytes(new BinaryWriter().tag(1, 2).string(name).tag(2, 2).string(value).finish());
  series.tag(4, 2).bytes(h.finish());
  return compress(new BinaryWriter().tag(1, 2).bytes(series.finish()).finish());
}
