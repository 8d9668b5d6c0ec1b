import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { compress } from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { decodeRemoteWrite } from '../../../src/k6/remote-write.ts';

describe('decodeRemoteWrite', () => {
  it('reads labels and a native histogram: spans, deltas, zero bucket, timestamp', () => {
    const histogram = new BinaryWriter()
      .tag(1, 0)
      .uint64(6)
      .tag(3, 1)
      .double(0.5)
      .tag(4, 0)
      .sint32(3)
      .tag(5, 1)
      .double(1e-9)
      .tag(6, 0)
      .uint64(1)
      // Spans: buckets -40..-39, then a gap of 2, bucket -36.
      .tag(11, 2)
      .fork()
      .tag(1, 0)
      .sint32(-40)
      .tag(2, 0)
      .uint32(2)
      .join()
      .tag(11, 2)
      .fork()
      .tag(1, 0)
      .sint32(2)
      .tag(2, 0)
      .uint32(1)
      .join()
      // Counts 2, 1, 2 as deltas.
      .tag(12, 2)
      .fork()
      .sint64(2)
      .sint64(-1)
      .sint64(1)
      .join()
      .tag(15, 0)
      .int64(1_700_000_000_123)
      .finish();
    const label = (name: string, value: string) =>
      new BinaryWriter().tag(1, 2).string(name).tag(2, 2).string(value).finish();
    const series = new BinaryWriter()
      .tag(1, 2)
      .bytes(label('__name__', 'k6_http_req_duration_seconds'))
      .tag(1, 2)
      .bytes(label('expected_response', 'true'))
      .tag(4, 2)
      .bytes(histogram)
      .finish();
    const request = new BinaryWriter().tag(1, 2).bytes(series).finish();
    const [s] = decodeRemoteWrite(compress(request));
    expect(s!.labels).toEqual({ __name__: 'k6_http_req_duration_seconds', expected_response: 'true' });
    const h = s!.histograms[0]!;
    expect(h).toMatchObject({ count: 6, sum: 0.5, schema: 3, zeroThreshold: 1e-9, zeroCount: 1 });
    expect(h.timestampMs).toBe(1_700_000_000_123);
    expect([...h.buckets]).toEqual([
      [-40, 2],
      [-39, 1],
      [-36, 2],
    ]);
  });
});

describe('a body that is not a remote-write request', () => {
  it('is refused with an error, not decoded into garbage', () => {
    // Snappy that says 5 bytes but holds 1: what is decoded is no protobuf.
    expect(() => decodeRemoteWrite(Uint8Array.from([5, 0, 97]))).toThrow();
    // A header announcing more than the cap is refused before anything is allocated.
    expect(() => decodeRemoteWrite(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x7f]))).toThrow(/^snappy: /);
  });
});
