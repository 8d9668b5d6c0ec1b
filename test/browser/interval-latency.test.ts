import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { ROOT, startCli, tempDir, writeScript } from '../support/cli.ts';
import { STEP_SCRIPT } from '../support/raw-intervals.ts';
import { ensureChromium, openInChromium } from './support/chromium.ts';

// A real local run (real k6 runners through the real CLI, a real HTTP target on 127.0.0.1) and its
// HTML report opened in real headless Chromium (Debian's `chromium`). The run is 12 s here; the
// 60 s run of the issue is bench/timeline.ts.

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
  it('draws latency per interval: p50, p90, p95 and p99 lines, and the threshold trend', async () => {
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
    // 12 s at 0.2 s a point: about 60 points of each percentile, from the first data on.
    for (const p of ['p50', 'p90', 'p95', 'p99'])
      expect(labels[`${p} per interval`]).toBeGreaterThanOrEqual(55);
    expect(labels['http_req_duration{name:slow} p95 per interval']).toBeGreaterThan(20);
    // The since-start band is gone from this chart.
    expect(lines.some(([label]) => label.includes('since start'))).toBe(false);
    expect(dom).toContain('Latency per interval (ms)');
  });
});
