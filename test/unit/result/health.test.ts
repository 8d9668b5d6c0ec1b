import { describe, expect, it } from 'vitest';
import type { RunnerMetric, RunnerSummary } from '../../../src/k6/summary.ts';
import {
  CPU_MIN_WINDOW_S,
  CPU_SATURATED,
  loadGeneratorHealth,
  saturationWarning,
} from '../../../src/result/health.ts';
import { loadGeneratorSchema } from '../../../src/result/load-generator-schema.ts';

const root = { name: '', path: '', groups: [], checks: [] };

function summary(metrics: Record<string, RunnerMetric>): RunnerSummary {
  return { metrics, rootGroup: root, durationS: 10 };
}
const counter = (count: number): RunnerMetric => ({ type: 'counter', count, rate: count / 10 });
const gauge = (max: number): RunnerMetric => ({ type: 'gauge', value: max, min: 0, max });

/** A runner that kept up: 1,000 iterations, 10 of 40 VUs, nothing dropped. */
const fine = summary({ iterations: counter(1000), vus: gauge(10), vus_max: gauge(40) });

describe('load-generator health', () => {
  it('is not saturated when every runner kept up', () => {
    const lg = loadGeneratorHealth(
      [
        { summary: fine, insufficientVUs: 0, cpuSeconds: 2, durationS: 10 },
        { summary: fine, insufficientVUs: 0, cpuSeconds: 3, durationS: 10 },
      ],
      true,
    );
    expect(lg).toMatchObject({ saturated: false, reasons: [], droppedIterations: 0, insufficientVUs: 0 });
    expect(lg.cpu).toBeCloseTo(0.3);
    expect(saturationWarning(lg)).toBeUndefined();
    expect(loadGeneratorSchema.parse(lg)).toEqual(lg);
  });

  it('counts dropped iterations per runner and for the run, naming the runner and the share', () => {
    const dropped = summary({ iterations: counter(888), dropped_iterations: counter(112) });
    const lg = loadGeneratorHealth(
      [
        { summary: fine, insufficientVUs: 0, cpuSeconds: undefined, durationS: 10 },
        { summary: dropped, insufficientVUs: 0, cpuSeconds: undefined, durationS: 10 },
      ],
      true,
    );
    expect(lg.saturated).toBe(true);
    expect(lg.droppedIterations).toBe(112);
    expect(lg.runners.map((r) => r.droppedIterations)).toEqual([0, 112]);
    expect(lg.reasons).toEqual(['runner 1 dropped 112 of 1,000 iterations (11.2%)']);
    expect(lg.cpu).toBe('unknown');
    expect(saturationWarning(lg)).toMatch(
      /^⚠️ The load generator saturated: runner 1 dropped 112 of 1,000 iterations \(11\.2%\)/,
    );
  });

  it('flags vus at vus_max with k6\'s "Insufficient VUs" warnings, only for arrival-rate scripts', () => {
    const pinned = summary({ iterations: counter(500), vus: gauge(40), vus_max: gauge(40) });
    const runner = { summary: pinned, insufficientVUs: 3, cpuSeconds: undefined, durationS: 10 };
    const lg = loadGeneratorHealth([runner], true);
    expect(lg.vusMaxReached).toBe(true);
    expect(lg.reasons).toEqual(['runner 0 hit maxVUs (40 of 40) and k6 warned "Insufficient VUs" 3 times']);
    // constant-vus runs every VU by design: vus == vus_max is not saturation there.
    expect(loadGeneratorHealth([runner], false)).toMatchObject({ saturated: false, vusMaxReached: false });
    // Pinned without a warning is not enough; a log that was not read is `unknown`.
    const unread = loadGeneratorHealth([{ ...runner, insufficientVUs: undefined }], true);
    expect(unread).toMatchObject({ saturated: false, insufficientVUs: 'unknown', vusMaxReached: true });
  });

  it('flags a runner that used a core or nearly, over its own test', () => {
    const busy = { summary: fine, insufficientVUs: 0, cpuSeconds: 9.7, durationS: 10 };
    const calm = { summary: fine, insufficientVUs: 0, cpuSeconds: CPU_SATURATED * 10 - 0.1, durationS: 10 };
    expect(loadGeneratorHealth([calm, calm, busy], true).reasons).toEqual(['runner 2 used 97% of a core']);
    expect(loadGeneratorHealth([calm], true).saturated).toBe(false);
  });

  it("judges no CPU share over a test shorter than 5 s, where k6's own start dominates", () => {
    // A 20-iteration test of 12 ms read as 100% of a core on a busy machine (root-action e2e).
    const blip = { summary: fine, insufficientVUs: 0, cpuSeconds: 0.012, durationS: 0.012 };
    const short = loadGeneratorHealth([blip], false);
    expect(short).toMatchObject({ saturated: false, cpu: 'unknown' });
    const atWindow = { ...blip, cpuSeconds: CPU_MIN_WINDOW_S, durationS: CPU_MIN_WINDOW_S };
    expect(loadGeneratorHealth([atWindow], false).reasons).toEqual(['runner 0 used 100% of a core']);
  });
});
