import { describe, expect, it } from 'vitest';
import type { IntervalDelta } from '../../../src/result/interval-latency.ts';
import { decodeIntervalLines, encodeIntervalLines, mergeByKey } from '../../../src/result/interval-lines.ts';

const delta = (
  key: string,
  fromMs: number,
  toMs: number,
  buckets: Array<[number, number]>,
): IntervalDelta => ({
  key,
  fromMs,
  toMs,
  seconds: true,
  h: {
    timestampMs: toMs,
    count: buckets.reduce((a, [, c]) => a + c, 0),
    sum: 0.5,
    schema: 3,
    zeroThreshold: 2.9e-39,
    zeroCount: 0,
    buckets: new Map(buckets),
  },
});

describe("the interval receiver's log lines", () => {
  it('carry every delta through, with other lines of the log ignored, and the end line', () => {
    const deltas = [
      delta('http_req_duration{expected_response:true}', 1000, 1100, [
        [-53, 4],
        [-40, 1],
      ]),
      delta('http_req_duration', 1100, 1200, [[-50, 2]]),
    ];
    const end = { pushes: 2, refused: 0 };
    const lines = encodeIntervalLines(deltas, end);
    expect(lines[0]).toBe('k6d-iv-keys ["http_req_duration{expected_response:true}","http_req_duration"]');
    expect(lines).toHaveLength(4);
    const log = ['k6d-iv-listening 127.0.0.1:6567', ...lines, ''].join('\n');
    expect(decodeIntervalLines(log)).toEqual({ deltas, end });
  });

  it('say when the end line is missing (a log cut short), and name a malformed line', () => {
    const lines = encodeIntervalLines([delta('k', 0, 1, [[1, 1]])], { pushes: 1, refused: 0 });
    expect(decodeIntervalLines(lines.slice(0, 2).join('\n')).end).toBeUndefined();
    expect(() => decodeIntervalLines(`${lines[0]}\nk6d-iv [0,1,2`)).toThrow(
      /malformed receiver line: k6d-iv \[0,1,2/,
    );
    // A key number the keys line does not have.
    expect(() => decodeIntervalLines('k6d-iv-keys []\nk6d-iv [0,1,2,1,3,0,0,1,1,5,1]')).toThrow(/malformed/);
  });

  it("merge one push's series by key: buckets add, the span covers them all", () => {
    const merged = mergeByKey([
      delta('a', 1000, 1100, [[-50, 2]]),
      delta('a', 990, 1105, [
        [-50, 1],
        [-49, 3],
      ]),
      delta('b', 1000, 1100, [[-10, 1]]),
    ]);
    expect(merged).toHaveLength(2);
    expect(merged[0]!.fromMs).toBe(990);
    expect(merged[0]!.toMs).toBe(1105);
    expect(merged[0]!.h.count).toBe(6);
    expect([...merged[0]!.h.buckets]).toEqual([
      [-50, 3],
      [-49, 3],
    ]);
    expect(merged[1]!.key).toBe('b');
  });
});
