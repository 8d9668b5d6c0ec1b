import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { TimelineSchema } from '../../src/result/timeline-schema.ts';
import { startCli, tempDir, writeScript } from '../support/cli.ts';
import { compareWithRaw, STEP_SCRIPT } from '../support/raw-intervals.ts';

// Real k6 runners through the real CLI against a real HTTP server on 127.0.0.1. The runners'
// own `--out json` files are the truth the per-interval percentiles are checked against.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

describe('latency per interval', () => {
  it('matches the raw samples of each interval within 5%, for http_req_duration and a threshold submetric', async () => {
    const script = writeScript(STEP_SCRIPT);
    const cwd = tempDir('k6d-interval-');
    const { done } = startCli(
      [
        'run',
        script,
        '--runners',
        '2',
        '--',
        '-e',
        `TARGET=${target.url}`,
        '--out',
        'json=raw-{runner}.json',
      ],
      { cwd },
    );
    const run = await done;
    expect(run.code, run.stderr).toBe(0);
    const timeline = TimelineSchema.parse(run.result!.timeline);
    const latency = timeline.latency!;
    expect(latency.intervalS).toBe(0.2);
    const files = [0, 1].map((i) => path.join(cwd, `raw-${i}.json`));
    const startedAtMs = Date.parse(run.result!.startedAt);
    // Never a point before the first data, and about 60 points.
    const http = latency.metrics.find((m) => m.metric === 'http_req_duration{expected_response:true}')!;
    expect(http.points[0]!.count).toBeGreaterThan(0);
    expect(http.points.length).toBeGreaterThanOrEqual(55);
    for (const [key, tags] of [
      ['http_req_duration{expected_response:true}', { expected_response: 'true' }],
      ['http_req_duration{name:slow}', { name: 'slow' }],
    ] as const) {
      const rows = compareWithRaw(latency, key, files, 'http_req_duration', tags, startedAtMs);
      // Intervals with enough samples for a p95 to mean something (the first and last are partial).
      const full = rows.filter((r) => r.rawCount >= 20);
      expect(full.length, key).toBeGreaterThan(key.includes('slow') ? 20 : 50);
      const p95Errors = full.map((r) => Math.abs(r.p.p95[2]));
      const within = p95Errors.filter((e) => e <= 0.05).length;
      // Every interval's p95 within 5% but for a push split across an edge (at most 1 in 20).
      expect(
        within / full.length,
        `${key}: ${JSON.stringify(full.map((r) => r.p.p95))}`,
      ).toBeGreaterThanOrEqual(0.95);
      const counted = rows.reduce((a, r) => a + r.ourCount, 0);
      const raw = rows.reduce((a, r) => a + r.rawCount, 0);
      expect(Math.abs(counted - raw) / raw).toBeLessThan(0.02);
    }
    // The step at 6 s shows per interval: p95 before it is under 30 ms, after it over 30 ms.
    const before = http.points.filter((p) => p.tS > 1 && p.tS < 5.5);
    const after = http.points.filter((p) => p.tS > 7 && p.tS < 11);
    expect(before.every((p) => p.p95! < 29)).toBe(true);
    expect(after.every((p) => p.p95! > 30)).toBe(true);
  });
});
