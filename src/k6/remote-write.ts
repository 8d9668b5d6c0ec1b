/**
 * Prometheus remote-write requests as k6's `experimental-prometheus-rw` output sends them, decoded
 * to what the timeline needs: every series' labels and its native histograms.
 *
 * Wire format (Prometheus `prompb/remote.proto`, `types.proto`; the message k6 v2.2.0 builds in
 * `output/prometheusrw/remotewrite/trend.go` `histogramToHistogramProto`):
 * - WriteRequest: 1 timeseries (repeated TimeSeries);
 * - TimeSeries: 1 labels (Label: 1 name, 2 value), 4 histograms (repeated Histogram);
 * - Histogram: 1 count_int, 3 sum (double), 4 schema (sint32), 5 zero_threshold (double),
 *   6 zero_count_int, 11 positive_spans (BucketSpan: 1 offset sint32, 2 length uint32),
 *   12 positive_deltas (packed sint64: each bucket's count minus the previous one's), 15 timestamp (ms).
 * Plain samples (field 2: counters, gauges) and negative buckets are skipped: k6's trends are not negative.
 * The protobuf wire reader is @bufbuild/protobuf's; the body is a snappy block, decompressed by snappyjs.
 */

import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { uncompress } from 'snappyjs';

/** The largest decompressed body accepted, bytes: far above any k6 push, it bounds a hostile header. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;

/**
 * One native histogram, cumulative since the runner's start (k6 keeps one Prometheus histogram
 * per series for the whole test). Bucket `i` holds the values in `(base^(i-1), base^i]`, with
 * `base = 2^(2^-schema)` (schema 3: base 1.0905, k6's bucket factor 1.1); values at most
 * `zeroThreshold` are in the zero bucket. Values are in the series' unit: seconds for time trends.
 */
export interface NativeHistogram {
  /** The series' latest sample time when it was sent, epoch ms (k6 `swm.Latest`). */
  timestampMs: number;
  count: number;
  sum: number;
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  /** Count of each non-empty positive bucket, by bucket index. */
  buckets: Map<number, number>;
}

/** One time series of a remote-write request. */
export interface RemoteWriteSeries {
  /** Its labels by name, `__name__` included (k6: `k6_<metric>` plus `_seconds` for time trends). */
  labels: Record<string, string>;
  /** Its native histograms (none for counters, gauges and rates). */
  histograms: NativeHistogram[];
}

/**
 * Decodes one remote-write request body (snappy-compressed protobuf).
 * @throws Error when the body is not valid snappy (`snappy: …`) or protobuf (`premature EOF`, …).
 */
export function decodeRemoteWrite(body: Uint8Array): RemoteWriteSeries[] {
  let raw: Uint8Array;
  try {
    raw = uncompress(body, MAX_BODY_BYTES);
  } catch (e) {
    throw new Error(`snappy: ${(e as Error).message}`);
  }
  const reader = new BinaryReader(raw);
  const series: RemoteWriteSeries[] = [];
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === WireType.LengthDelimited) series.push(readSeries(reader.bytes()));
    else reader.skip(wire, field);
  }
  return series;
}

function readSeries(bytes: Uint8Array): RemoteWriteSeries {
  const reader = new BinaryReader(bytes);
  const out: RemoteWriteSeries = { labels: {}, histograms: [] };
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === WireType.LengthDelimited) {
      const label = new BinaryReader(reader.bytes());
      let name = '';
      let value = '';
      while (label.pos < label.len) {
        const [f, w] = label.tag();
        if (f === 1) name = label.string();
        else if (f === 2) value = label.string();
        else label.skip(w, f);
      }
      out.labels[name] = value;
    } else if (field === 4 && wire === WireType.LengthDelimited) {
      out.histograms.push(readHistogram(reader.bytes()));
    } else reader.skip(wire, field);
  }
  return out;
}

function readHistogram(bytes: Uint8Array): NativeHistogram {
  const reader = new BinaryReader(bytes);
  const h: NativeHistogram = {
    timestampMs: 0,
    count: 0,
    sum: 0,
    schema: 0,
    zeroThreshold: 0,
    zeroCount: 0,
    buckets: new Map(),
  };
  const spans: Array<[offset: number, length: number]> = [];
  const deltas: number[] = [];
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    switch (field) {
      case 1:
        h.count = Number(reader.uint64());
        break;
      case 3:
        h.sum = reader.double();
        break;
      case 4:
        h.schema = reader.sint32();
        break;
      case 5:
        h.zeroThreshold = reader.double();
        break;
      case 6:
        h.zeroCount = Number(reader.uint64());
        break;
      case 11: {
        const span = new BinaryReader(reader.bytes());
        let offset = 0;
        let length = 0;
        while (span.pos < span.len) {
          const [f, w] = span.tag();
          if (f === 1) offset = span.sint32();
          else if (f === 2) length = span.uint32();
          else span.skip(w, f);
        }
        spans.push([offset, length]);
        break;
      }
      case 12:
        if (wire === WireType.LengthDelimited) {
          const end = reader.uint32() + reader.pos;
          while (reader.pos < end) deltas.push(Number(reader.sint64()));
        } else deltas.push(Number(reader.sint64()));
        break;
      case 15:
        h.timestampMs = Number(reader.int64());
        break;
      default:
        reader.skip(wire, field);
    }
  }
  // Spans: the first offset is the first bucket's index, later ones the gap after the previous span.
  let index = 0;
  let count = 0;
  let d = 0;
  for (const [offset, length] of spans) {
    index += offset;
    for (let k = 0; k < length; k++, index++) {
      count += deltas[d++] ?? 0;
      if (count > 0) h.buckets.set(index, count);
    }
  }
  return h;
}
