import { describe, expect, it } from 'vitest';
import { BarrierLog, nodeClocksApart } from '../../../../../src/backends/kubernetes/barrier/log.ts';

describe("a runner's barrier log, as its follow delivers it", () => {
  it('joins lines split across chunks, ignores k6 warnings and tells ready, started and end once each', () => {
    let changes = 0;
    const log = new BarrierLog(() => changes++);
    log.feed('Request Failed\nk6d-rea');
    expect(log.readyAtMs).toBeUndefined();
    log.feed('dy 1000\n');
    expect(log.readyAtMs).toBe(1000);
    expect(changes).toBe(1);
    log.feed('k6d-started 1400\nk6d-started 1400 1403\nk6d-started 1500 1502\n');
    expect(log.started).toEqual({ sentAtMs: 1400, atMs: 1403 });
    expect(changes).toBe(2);
    log.feed('k6d-vus 1500 3\nk6d-vus 2000 5\n');
    expect(changes).toBe(2);
    // Not ended: no record yet (a partial one would read as the whole test).
    expect(log.vusRecord()).toBeUndefined();
    log.feed('k6d-vus 2500 x\nk6d-vus 3000\nk6d-end 3200 9\nk6d-end 3300 10\n');
    expect(log.end).toEqual({ atMs: 3200, status: 9 });
    expect(changes).toBe(3);
    expect(log.vusRecord()).toEqual({
      changes: [
        { atMs: 1500, vus: 3 },
        { atMs: 2000, vus: 5 },
      ],
      endedAtMs: 3200,
      periodMs: 500,
    });
  });

  it('reads a log again from its start after a broken follow without counting a sample twice', () => {
    const log = new BarrierLog();
    log.feed('k6d-ready 1000\nk6d-vus 1500 3\nk6d-vus 20');
    log.reset();
    log.feed('k6d-ready 1000\nk6d-vus 1500 3\nk6d-vus 2000 4\nk6d-end 2600 9\n');
    expect(log.vusRecord()!.changes).toEqual([
      { atMs: 1500, vus: 3 },
      { atMs: 2000, vus: 4 },
    ]);
  });

  it("bounds how far this machine's clock is ahead of the node's by the line that came quickest", () => {
    let now = 1_000_000;
    const log = new BarrierLog(() => {}, { now: () => now });
    expect(log.aheadMs).toBeUndefined();
    // Ready 400 ms before this clock read it, then clock lines 200 and 30 ms before: the least counts.
    log.feed(`k6d-ready ${now - 400}\n`);
    expect(log.aheadMs).toBe(400);
    now += 500;
    log.feed(`k6d-clock ${now - 30}\nk6d-clock ${now - 200}\n`);
    expect(log.aheadMs).toBe(30);
    // A node clock ahead of this one gives a negative bound.
    log.feed(`k6d-clock ${now + 5000}\n`);
    expect(log.aheadMs).toBe(-5000);
    // Other lines say nothing of the clock.
    log.feed(`k6d-vus ${now + 60_000} 3\nk6d-started ${now + 60_000} ${now + 60_001}\n`);
    expect(log.aheadMs).toBe(-5000);
  });

  it('tells how far apart the node clocks are at least, and which runners are at the ends', () => {
    // Bounds of 3 runners: runner 2's node is 900 ms behind runner 1's (less their lines' delays).
    expect(nodeClocksApart([40, 12, 912])).toEqual({ gapMs: 900, behind: 2, ahead: 1 });
    expect(nodeClocksApart([5])).toEqual({ gapMs: 0, behind: 0, ahead: 0 });
  });

  it('has no record for a test that ended before any sample', () => {
    const log = new BarrierLog();
    log.feed('k6d-ready 1000\nk6d-end 1100 10\n');
    expect(log.end).toEqual({ atMs: 1100, status: 10 });
    expect(log.vusRecord()).toBeUndefined();
  });
});
