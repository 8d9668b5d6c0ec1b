import { describe, expect, it } from 'vitest';
import { BarrierLog } from '../../../../src/backends/kubernetes/barrier-log.ts';

describe("a runner's barrier log, as its follow delivers it", () => {
  it('joins lines split across chunks, ignores k6 warnings and tells ready and end once each', () => {
    let changes = 0;
    const log = new BarrierLog(() => changes++);
    log.feed('Request Failed\nk6d-rea');
    expect(log.readyAtMs).toBeUndefined();
    log.feed('dy 1000\nk6d-vus 1500 3\nk6d-vus 2000 5\n');
    expect(log.readyAtMs).toBe(1000);
    expect(changes).toBe(1);
    // Not ended: no record yet (a partial one would read as the whole test).
    expect(log.vusRecord()).toBeUndefined();
    log.feed('k6d-vus 2500 x\nk6d-vus 3000\nk6d-end 3200 9\nk6d-end 3300 10\n');
    expect(log.end).toEqual({ atMs: 3200, status: 9 });
    expect(changes).toBe(2);
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

  it('has no record for a test that ended before any sample', () => {
    const log = new BarrierLog();
    log.feed('k6d-ready 1000\nk6d-end 1100 10\n');
    expect(log.end).toEqual({ atMs: 1100, status: 10 });
    expect(log.vusRecord()).toBeUndefined();
  });
});
