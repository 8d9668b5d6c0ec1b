import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractSummary } from '../../src/backends/kubernetes/log-summary.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { runnerEntryModule, SUMMARY_OUT_ENV } from '../../src/k6/entry.ts';
import { COMPACT_SUMMARY_FORMAT, parseRunnerSummary } from '../../src/k6/summary.ts';
import { summaryTrendStats } from '../../src/run/plan.ts';
import { k6Binary } from '../equivalence/harness.ts';
import { tempDir } from '../support/cli.ts';

// The runner's compact summary (written by the entry module's handleSummary inside real k6) against
// k6's own --summary-export of the same run: the aggregation must read the same numbers from both.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget('127.0.0.1');
});
afterAll(async () => {
  await target?.stop();
});

const script = `
import http from 'k6/http';
import { check, group } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
const c = new Counter('my_counter');
const g = new Gauge('my_gauge');
const r = new Rate('my_rate');
const t = new Trend('my_trend', true);
export const options = {
  vus: 3,
  iterations: 60,
  thresholds: { 'http_req_duration{name:a}': ['p(97.5)<5000'], my_rate: ['rate>0'] },
};
export default function () {
  group('shop', () => {
    const res = http.get(__ENV.TARGET + '/a', { tags: { name: 'a' } });
    check(res, { 'is 200': (x) => x.status === 200 });
  });
  c.add(2);
  g.add(__ITER);
  r.add(__ITER % 3 === 0);
  t.add(Math.random() * 50);
}
export function handleSummary() { throw new Error('a runner must never run the script handleSummary'); }
`;

/** Runs one runner's k6 (async: the target answers from this process). */
async function runRunner(out: string): Promise<{ dir: string; exported: string; stdout: string }> {
  const dir = tempDir('k6d-compact-');
  const user = path.join(dir, 'script.js');
  writeFileSync(user, script);
  const entry = path.join(dir, 'entry.js');
  writeFileSync(
    entry,
    runnerEntryModule({
      script: user,
      thresholds: { 'http_req_duration{name:a}': ['p(97.5)<5000'], my_rate: ['rate>0'] },
      runsDefault: true,
    }),
  );
  const exported = path.join(dir, 'export.json');
  const { stdout } = await promisify(execFile)(
    k6Binary(),
    [
      'run',
      '--no-usage-report',
      '--quiet',
      '--summary-mode',
      'compact',
      '--summary-trend-stats',
      summaryTrendStats([97.5]),
      '--summary-export',
      exported,
      entry,
    ],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        TARGET: target.url,
        [SUMMARY_OUT_ENV]: out === 'file' ? path.join(dir, 'compact.json') : 'stdout',
      },
    },
  );
  return { dir, exported: readFileSync(exported, 'utf8'), stdout };
}

describe('the compact runner summary', () => {
  it("parses to the same runner summary as k6's export of the same run", async () => {
    const { dir, exported } = await runRunner('file');
    const compactText = readFileSync(path.join(dir, 'compact.json'), 'utf8');
    expect(JSON.parse(compactText).format).toBe(COMPACT_SUMMARY_FORMAT);
    const compact = parseRunnerSummary(compactText);
    const legacy = parseRunnerSummary(exported);
    // The local backend hands the file's bytes over: read the same as the text.
    const fromBytes = parseRunnerSummary(readFileSync(path.join(dir, 'compact.json')));
    expect(fromBytes).toEqual(compact);
    expect(Object.keys(fromBytes.metrics).length).toBeGreaterThan(10);
    expect(Object.keys(compact.metrics).sort()).toEqual(Object.keys(legacy.metrics).sort());
    expect(compact.metrics['http_req_duration{name:a}']).toBeDefined();
    for (const [name, metric] of Object.entries(legacy.metrics)) {
      const other = compact.metrics[name]!;
      if (metric.type === 'trend' && other.type === 'trend') {
        // k6 writes its export's numbers to about 16 significant digits; the compact summary
        // carries the float64s themselves, so the two agree to that precision, not to the bit.
        const same = (a: number[], b: number[]) =>
          a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) <= 1e-12 * Math.abs(b[i]!));
        expect(other.count, name).toBe(metric.count);
        expect(same([other.min, other.max, other.avg], [metric.min, metric.max, metric.avg]), name).toBe(
          true,
        );
        expect(
          other.grid.points.map(([f]) => f),
          name,
        ).toEqual(metric.grid.points.map(([f]) => f));
        expect(
          same(
            other.grid.points.map(([, v]) => v),
            metric.grid.points.map(([, v]) => v),
          ),
          name,
        ).toBe(true);
        expect(other.grid.points.length, name).toBeGreaterThan(800);
      } else expect(other, name).toEqual(metric);
    }
    expect(compact.durationS).toBeCloseTo(legacy.durationS!, 9);
    expect(compact.rootGroup).toEqual(legacy.rootGroup);
    expect(compact.rootGroup.groups[0]!.checks[0]).toMatchObject({ name: 'is 200', passes: 60, fails: 0 });
    // The compact text is a fraction of the export: what makes 1,000 runners fast to read.
    expect(compactText.length).toBeLessThan(exported.length / 2);
  });

  it('is what a Pod log yields when both summaries were printed to stdout', async () => {
    const { stdout, exported } = await runRunner('stdout');
    // As on Kubernetes: the export goes to stdout too, and a k6 log line lands between them.
    const log = `${stdout}time="x" level=info msg="a line of k6's"\n${exported}`;
    const { summary, rest } = extractSummary(log);
    expect(JSON.parse(summary!).format).toBe(COMPACT_SUMMARY_FORMAT);
    expect(rest.trim()).toBe(`time="x" level=info msg="a line of k6's"`);
    expect(parseRunnerSummary(summary!).metrics.my_counter).toEqual({
      type: 'counter',
      count: 120,
      rate: expect.any(Number),
    });
  });
});
