import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import type { LatencyPoint } from '../../src/result/timeline-schema.ts';
import { ROOT, startCli, tempDir, writeScript } from '../support/cli.ts';
import { STEP_SCRIPT } from '../support/raw-intervals.ts';
import { ensureChromium, openInChromium } from './support/chromium.ts';

// A real local run (real k6 runners through the real CLI, a real HTTP target on 127.0.0.1) and its
// HTML report opened in real headless Chromium (Debian's `chromium`). The run lasts 60 s, as a
// short PR check does, at 50 requests/s (3,000 requests over 2 runners, light enough for a busy
// 2-core machine); the latency steps from 5–25 ms to 30–50 ms halfway (STEP_SCRIPT).

const OUTPUT = path.join(ROOT, 'test', '.output', 'interval-latency');

let target: RecordingTarget;
let chromium: string;
beforeAll(async () => {
  target = await startNodeTarget();
  chromium = ensureChromium();
  mkdirSync(OUTPUT, { recursive: true });
});
afterAll(async () => {
  await target?.stop();
});

describe('the HTML report of a real local run', () => {
  it('draws latency per interval on a 60 s run: p50, p90, p95 and p99 lines, and the threshold trend', {
    timeout: 180_000,
  }, async () => {
    const cwd = tempDir('k6d-interval-html-');
    const { done } = startCli(
      [
        'run',
        writeScript(STEP_SCRIPT),
        '--runners',
        '2',
        '--out',
        'res.json',
        '--',
        '-e',
        `TARGET=${target.url}`,
        '-e',
        'DURATION=60s',
        '-e',
        'RATE=50',
      ],
      { cwd },
    );
    const run = await done;
    expect(run.code, run.stderr).toBe(0);
    const { dom } = openInChromium(chromium, path.join(cwd, 'res.html'), path.join(OUTPUT, 'report.png'));
    const body = /<body([^>]*)>/.exec(dom)![1]!;
    expect(body).not.toContain('data-chart-error');
    // RPS, latency, threshold trends, errors, percentiles: each drawn.
    expect(body).toContain('data-charts="5"');
    expect(body).toContain('data-painted="5"');
    const lines = JSON.parse(
      /data-latency-lines="([^"]*)"/.exec(body)![1]!.replaceAll('&quot;', '"'),
    ) as Array<[string, number]>;
    const labels = Object.fromEntries(lines);
    // 60 s at 1 s a point: about 60 points of each percentile, from the first data on.
    for (const p of ['p50', 'p90', 'p95', 'p99'])
      expect(labels[`${p} per interval`]).toBeGreaterThanOrEqual(55);
    // The slow requests only come in the second half: about 30 points.
    expect(labels['http_req_duration{name:slow} p95 per interval']).toBeGreaterThan(20);
    expect(labels['http_req_duration{name:slow} p95 per interval']).toBeLessThan(40);
    // The since-start band is gone from this chart.
    expect(lines.some(([label]) => label.includes('since start'))).toBe(false);
    expect(dom).toContain('Latency per interval (ms)');
    // What the lines draw follows the step: p95 of 5–25 ms is about 24 ms, of 30–50 ms about
    // 49 ms; p50 about 15 then 40 ms. A since-start p50 would stay near 25 ms until the end, so the
    // p50 check tells per-interval from since-start (the result's own series, which the page reads).
    const result = JSON.parse(readFileSync(path.join(cwd, 'res.json'), 'utf8')) as {
      timeline: { latency: { metrics: Array<{ metric: string; points: Array<LatencyPoint> }> } };
    };
    const main = result.timeline.latency.metrics.find(
      (m) => m.metric === 'http_req_duration{expected_response:true}',
    )!;
    // Medians over each half, so that an interval starved of CPU on a busy machine does not decide.
    const median = (key: 'p50' | 'p95', from: number, to: number) => {
      const xs = main.points
        .filter((pt) => pt.tS > from && pt.tS <= to && pt[key] !== undefined)
        .map((pt) => pt[key]!)
        .sort((a, b) => a - b);
      expect(xs.length).toBeGreaterThan(20);
      return xs[Math.floor(xs.length / 2)]!;
    };
    expect(median('p95', 2, 28)).toBeLessThan(30);
    expect(median('p95', 32, 58)).toBeGreaterThan(45);
    expect(median('p50', 2, 28)).toBeLessThan(22);
    expect(median('p50', 32, 58)).toBeGreaterThan(35);
  });
});
