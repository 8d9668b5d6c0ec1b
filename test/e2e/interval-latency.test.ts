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
    // 500 req/s: 100 samples per 0.2 s interval, so that a p95 is not one sample's luck.
    const { done } = startCli(
      [
        'run',
        script,
        '--runners',
        '2',
        '--',
        '-e',
        `TARGET=${target.url}`,
        '-e',
        'RATE=500',
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
      const full = rows.filter((r) => r.rawCount >= 50);
      expect(full.length, key).toBeGreaterThan(key.includes('slow') ? 20 : 50);
      const p95Errors = full.map((r) => Math.abs(r.p.p95[2]));
      const within = p95Errors.filter((e) => e <= 0.05).length;
      // Within 5% but where a push split across an interval's edge moved the p95's few samples:
      // on a quiet machine 95% or more of these 0.2 s intervals; beside other test files on 2 cores
      // latency jumps within an interval (CPU starvation) and the edges weigh more, so 75% (the 60 s
      // run of bench/timeline.ts, with 200 samples an interval, has every one within 5%).
      const shown = `${key}: ${JSON.stringify(full.map((r) => r.p.p95))}`;
      expect(within / full.length, shown).toBeGreaterThanOrEqual(0.75);
      expect(p95Errors.sort((a, b) => a - b)[Math.floor(p95Errors.length / 2)], shown).toBeLessThan(0.03);
      const counted = rows.reduce((a, r) => a + r.ourCount, 0);
      const raw = rows.reduce((a, r) => a + r.rawCount, 0);
      expect(Math.abs(counted - raw) / raw).toBeLessThan(0.02);
    }
    // The step at 6 s lands in the same interval as in the raw samples: the largest rise of p50
    // between 5 s and 7 s is at the same point (a series off by one interval would fail).
    const rows = compareWithRaw(
      latency,
      'http_req_duration{expected_response:true}',
      files,
      'http_req_duration',
      { expected_response: 'true' },
      startedAtMs,
    ).filter((r) => r.tS > 5 && r.tS < 7);
    const steepest = (v: (r: (typeof rows)[number]) => number): number => {
      let at = 0;
      let rise = 0;
      for (let i = 1; i < rows.length; i++) {
        const d = v(rows[i]!) - v(rows[i - 1]!);
        if (d > rise) [at, rise] = [rows[i]!.tS, d];
      }
      return at;
    };
    expect(steepest((r) => r.p.p50[0])).toBe(steepest((r) => r.p.p50[1]));
  });
});
