import { describe, expect, it } from 'vitest';
import type { VusRecord } from '../../../src/backends/backend.ts';
import { mergeVusRecords } from '../../../src/run/status-poll.ts';

const record = (changes: Array<[number, number]>, endedAtMs: number): VusRecord => ({
  changes: changes.map(([atMs, vus]) => ({ atMs, vus })),
  endedAtMs,
  periodMs: 500,
});

describe("the whole test's vus samples from the runners' own records", () => {
  it('sums every runner per period, from when all had started until the last one ended', () => {
    // Runner 0 ramps 1 → 3 and ends at 2.2 s; runner 1 starts one period later, holds 2, ends at 3.1 s.
    const samples = mergeVusRecords([
      record(
        [
          [0, 1],
          [1010, 3],
        ],
        2200,
      ),
      record([[520, 2]], 3100),
    ]);
    expect(samples).toEqual([
      { atMs: 500, vus: 3 },
      { atMs: 1000, vus: 5 },
      { atMs: 1500, vus: 5 },
      { atMs: 2000, vus: 5 },
      // Runner 0 has ended: it counts 0, as a runner whose test ended does in the status poll.
      { atMs: 2500, vus: 2 },
      { atMs: 3000, vus: 2 },
    ]);
  });

  it('gives nothing when a runner has no record (the status poll or the summaries are used instead)', () => {
    expect(mergeVusRecords([record([[0, 1]], 1000), undefined])).toEqual([]);
    expect(mergeVusRecords([])).toEqual([]);
  });
});
