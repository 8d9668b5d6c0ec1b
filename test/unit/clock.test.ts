import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock.ts';

describe('realClock.sleep', () => {
  it('waits its time, and an abort ends it at once and releases its timer', async () => {
    const t0 = performance.now();
    await realClock.sleep(30);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const controller = new AbortController();
    const sleeping = realClock.sleep(60_000, controller.signal);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before + 1);
    controller.abort();
    await sleeping;
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
    // Already aborted: no timer at all.
    await realClock.sleep(60_000, controller.signal);
  });
});
