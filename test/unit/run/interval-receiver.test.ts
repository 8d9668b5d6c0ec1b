import { describe, expect, it } from 'vitest';
import type { Runner, RunnerIntervals } from '../../../src/backends/backend.ts';
import type { Threshold } from '../../../src/k6/thresholds-parser.ts';
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

  it("gives way to the user's own remote-write output; on Kubernetes it leaves the receiving to the runner Pods", async () => {
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
    const remote = await startIntervalMetrics(plain, {
      backend: 'kubernetes',
      totalDurationS: 10,
      thresholds: [{ metric: 'http_req_duration{name:a}' } as Threshold],
      log,
    });
    // No server here: each runner Pod's receiver takes the pushes, the backend sets the URL.
    expect(remote!.plan.intervalMetrics).toEqual({
      url: 'http://127.0.0.1',
      pushIntervalMs: 20,
      metrics: ['http_req_duration{name:a}'],
    });
  });

  it("on Kubernetes, gathers every runner's deltas, or drops the series with one warning naming the runners that failed", async () => {
    const plain = planRun({ runners: 2, maxVUs: 2, userRunArgs: [], tags: {} });
    const h = {
      timestampMs: 0,
      count: 4,
      sum: 0.04,
      schema: 3,
      zeroThreshold: 0,
      zeroCount: 0,
      buckets: new Map([[-53, 4]]),
    };
    const delta = {
      key: 'http_req_duration{expected_response:true}',
      fromMs: 1_000,
      toMs: 1_020,
      seconds: true,
      h,
    };
    const runner = (got: RunnerIntervals) => ({ intervalDeltas: async () => got }) as unknown as Runner;

    const log = recordingLogger();
    const ok = await startIntervalMetrics(plain, {
      backend: 'kubernetes',
      totalDurationS: 10,
      thresholds: [],
      log,
    });
    await ok!.gather([
      runner({ deltas: [delta] }),
      runner({ deltas: [{ ...delta, fromMs: 1_300, toMs: 1_320 }] }),
    ]);
    const latency = ok!.finish(timeline, 1_000).latency!;
    expect(latency.metrics[0]!.points.map((p) => [p.tS, p.count])).toEqual([
      [0.2, 4],
      [0.4, 4],
    ]);
    expect(log.lines).toEqual([]);

    const failed = await startIntervalMetrics(plain, {
      backend: 'kubernetes',
      totalDurationS: 10,
      thresholds: [],
      log,
    });
    await failed!.gather([
      runner({ deltas: [delta] }),
      runner({ missing: "runner 1's interval receiver printed no end line" }),
    ]);
    expect(failed!.finish(timeline, 1_000)).toBe(timeline);
    expect(log.lines).toEqual([
      expect.stringMatching(
        /timeline: no latency per interval .*runner 1's interval receiver printed no end line/,
      ),
    ]);
  });
});
