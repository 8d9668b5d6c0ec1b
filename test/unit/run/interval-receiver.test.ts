import { describe, expect, it } from 'vitest';
import { TIMELINE_SCHEMA, type Timeline } from '../../../src/result/timeline-schema.ts';
import { startIntervalMetrics } from '../../../src/run/interval-receiver.ts';
import { planRun } from '../../../src/run/plan.ts';
import { histogramPush } from '../../support/remote-write.ts';
import { recordingLogger } from './support/fakes.ts';

// A real HTTP server on 127.0.0.1 and real requests in k6's remote-write format.

const timeline: Timeline = {
  schema: TIMELINE_SCHEMA,
  intervalS: 1,
  latencyMetric: 'http_req_duration',
  p95Scope: 'since-start',
  points: [],
};

describe('the interval receiver', () => {
  it("takes the runners' pushes on 127.0.0.1 and adds the latency per interval to the timeline", async () => {
    const plan = planRun({ runners: 2, maxVUs: 2, userRunArgs: [], tags: {} });
    const log = recordingLogger();
    const rw = (await startIntervalMetrics(plan, {
      backend: 'local',
      totalDurationS: 60,
      thresholds: [],
      log,
    }))!;
    try {
      expect(rw.plan.intervalMetrics!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(rw.plan.intervalMetrics!.pushIntervalMs).toBe(100);
      const t0 = 1_700_000_000_000;
      const labels = { __name__: 'k6_http_req_duration_seconds', expected_response: 'true' };
      const post = (runner: number, body: Uint8Array) =>
        fetch(`${rw.plan.intervalMetrics!.url}/${runner}`, { method: 'POST', body });
      // Runner 0: 3 samples around 10 ms in the first second; runner 1: 2 around 50 ms in the second.
      expect((await post(0, histogramPush(labels, [0.01, 0.0101, 0.0099], t0 + 500))).status).toBe(204);
      expect((await post(1, histogramPush(labels, [0.05, 0.051], t0 + 1500))).status).toBe(204);
      expect((await post(1, Uint8Array.from([1, 2, 3]))).status).toBe(400);
      const latency = rw.finish({ ...timeline }, t0).latency!;
      expect(latency.intervalS).toBe(1);
      const points = latency.metrics[0]!.points;
      expect(points.map((p) => [p.tS, p.count])).toEqual([
        [1, 3],
        [2, 2],
      ]);
      expect(Math.abs(points[0]!.p50! / 10 - 1)).toBeLessThan(0.045);
      expect(Math.abs(points[1]!.p95! / 51 - 1)).toBeLessThan(0.045);
      expect(log.lines.join('\n')).toMatch(/timeline: a runner's push was refused: snappy/);
    } finally {
      await rw.close();
    }
  });

  it("gives way to the user's own remote-write output, and is local only", async () => {
    const log = recordingLogger();
    const own = planRun({
      runners: 1,
      maxVUs: 1,
      userRunArgs: ['-o', 'experimental-prometheus-rw'],
      tags: {},
    });
    expect(
      await startIntervalMetrics(own, { backend: 'local', totalDurationS: 10, thresholds: [], log }),
    ).toBeUndefined();
    expect(log.lines.join('\n')).toMatch(/keeps its URL/);
    const plain = planRun({ runners: 1, maxVUs: 1, userRunArgs: [], tags: {} });
    expect(
      await startIntervalMetrics(plain, { backend: 'kubernetes', totalDurationS: 10, thresholds: [], log }),
    ).toBeUndefined();
  });
});
