import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import getPort from 'get-port';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareResults } from '../../src/compare/compare.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../src/compare/judgement.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { httpRequest, K6_STATUS, runnerApi } from '../../src/k6/rest.ts';
import { renderHtmlReport } from '../../src/render/html/report.ts';
import { CHART_JS_SOURCE, CHART_JS_VERSION } from '../../src/render/html/vendor/chartjs.ts';
import type { RunResult } from '../../src/result/schema.ts';
import type { Timeline } from '../../src/result/timeline-schema.ts';
import { checkTotalsFromGroups, TimelineRecorder } from '../../src/result/timeseries.ts';
import { ROOT, runCli, writeScript } from '../support/cli.ts';
import { ensureChromium, openInChromium } from './support/chromium.ts';

// Real k6 (through the real CLI, and once directly with its REST API for the time series), a real
// HTTP target on 127.0.0.1, and the report opened in real headless Chromium (Debian's `chromium`).

/** Where the report and its screenshot are kept for a person to look at (git-ignored). */
const OUTPUT = path.join(ROOT, 'test', '.output', 'html-report');

/** Names that would break HTML or a <script> element if they were not escaped. */
const HOSTILE_CHECK = '</script><img src=x onerror="document.title=1"> status is 200';
const HOSTILE_GROUP = 'cart & <b>checkout</b>';

const SCRIPT = `
import http from 'k6/http';
import { check, group } from 'k6';
export const options = {
  scenarios: {
    api: { executor: 'constant-arrival-rate', rate: 100, timeUnit: '1s', duration: '4s', preAllocatedVUs: 10, maxVUs: 20 },
  },
  thresholds: { http_req_failed: ['rate<0.2'], http_req_duration: ['p(95)<500', 'p(99)<800'], checks: ['rate>0.99'] },
};
export default function () {
  group(${JSON.stringify(HOSTILE_GROUP)}, () => {
    // Every 20th iteration asks for a 500: errors and failed checks to draw.
    const path = __ITER % 20 === 19 ? '/status/500' : '/api/items';
    const res = http.get(__ENV.BASE_URL + path);
    check(res, { ${JSON.stringify(HOSTILE_CHECK)}: (r) => r.status === 200 });
  });
}
`;

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

/** Runs k6 once with its REST API and records the series from /v1/metrics and /v1/groups polls. */
async function recordTimeline(script: string): Promise<{ timeline: Timeline; arrivals: number }> {
  const port = await getPort({ host: '127.0.0.1' });
  const before = target.arrivals.length;
  const k6: ChildProcess = spawn(
    process.env.K6_BINARY!,
    ['run', '--quiet', '--linger', '--address', `127.0.0.1:${port}`, '-e', `BASE_URL=${target.url}`, script],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  k6.stderr!.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<void>((resolve) => k6.once('exit', () => resolve()));
  const request = httpRequest(`http://127.0.0.1:${port}`, 5000);
  const api = runnerApi(request);
  try {
    // The API is up before the test starts; time 0 is when k6 reports it running.
    let status = -1;
    const deadline = Date.now() + 60_000;
    while (status < K6_STATUS.Running && Date.now() < deadline && k6.exitCode === null) {
      status = await api.status().then(
        (s) => s.status,
        () => -1,
      );
      if (status < K6_STATUS.Running) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status, stderr).toBeGreaterThanOrEqual(K6_STATUS.Running);
    const recorder = new TimelineRecorder({ intervalS: 1, startedAtMs: Date.now() });
    const poll = async (ended = false) => [
      {
        runner: 0,
        ended,
        metrics: await api.metrics(),
        checks: checkTotalsFromGroups(await request('GET', '/v1/groups')),
      },
    ];
    // --linger keeps the API up after the test: poll until it ended, then read the last counts.
    while ((await api.status()).status < K6_STATUS.Ended) {
      recorder.record(Date.now(), await poll());
      await new Promise((r) => setTimeout(r, 250));
    }
    // k6's metrics engine takes in the last samples shortly after the status says Ended: read
    // until the request count stops moving.
    let last = await poll(true);
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const next = await poll(true);
      const count = (p: typeof next) => p[0]!.metrics.find((m) => m.name === 'http_reqs')?.sample.count;
      const stable = count(next) === count(last);
      last = next;
      if (stable) break;
    }
    const timeline = recorder.finish(Date.now(), last);
    return { timeline, arrivals: target.arrivals.length - before };
  } finally {
    k6.kill('SIGTERM');
    await exited;
  }
}

let recorded: Promise<{ timeline: Timeline; arrivals: number }> | undefined;
/** The series of one real k6 run, recorded once for the tests that need it. */
function realTimeline() {
  recorded ??= recordTimeline(writeScript(SCRIPT));
  return recorded;
}

describe('HTML report', () => {
  it('inlines exactly the installed Chart.js (run `node src/render/html/vendor/update.mjs` after an update)', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'node_modules/chart.js/package.json'), 'utf8'));
    expect(CHART_JS_VERSION).toBe(pkg.version);
    expect(CHART_JS_SOURCE).toBe(
      readFileSync(path.join(ROOT, 'node_modules/chart.js/dist/chart.umd.min.js'), 'utf8'),
    );
  });

  it('records the run over time from a real k6 REST API: every request the target saw is in the series', async () => {
    const { timeline, arrivals } = await realTimeline();
    const points = timeline.points;
    expect(points.length).toBeGreaterThanOrEqual(4);
    expect(points.reduce((a, p) => a + p.requests, 0)).toBe(arrivals);
    const failedChecks = points.reduce((a, p) => a + (p.checksFailed ?? 0), 0);
    expect(failedChecks).toBe(target.arrivals.filter((a) => a.path === '/status/500').length);
    expect(failedChecks).toBeGreaterThan(0);
    // One runner: p95 since the start is exact; the constant arrival rate shows as ~100 req/s.
    const full = points.filter((p) => p.intervalS >= 0.9 && p.tS <= 4);
    expect(full.length).toBeGreaterThanOrEqual(2);
    for (const p of full) {
      expect(p.rps).toBeGreaterThan(50);
      expect(p.rps).toBeLessThan(150);
      expect(p.p95Ms).toBeGreaterThan(0);
      expect(p.avgMs).toBeGreaterThan(0);
    }
    writeFileSync(path.join(OUTPUT, 'timeline.json'), `${JSON.stringify(timeline, null, 2)}\n`);
  });

  it('renders a real 2-runner result with its series and a comparison, and Chromium draws every chart', async () => {
    const script = writeScript(SCRIPT);
    const run = await runCli(['run', script, '--runners', '2', '--', '-e', `BASE_URL=${target.url}`]);
    expect(run.result, run.stderr).toBeDefined();
    const result = run.result!;
    const { timeline } = await realTimeline();
    // A baseline 20% faster, to show the comparison.
    const base: RunResult = structuredClone(result);
    for (const m of Object.values(base.metrics))
      if (m.contains === 'time') for (const k of Object.keys(m.values)) m.values[k]! *= 0.8;
    const comparison = compareResults(base, result, { tolerances: DEFAULT_TOLERANCES, gate: DEFAULT_GATE });

    const html = renderHtmlReport({ result, timeline, comparison, baselineLabel: 'main @ 1a2b3c4' });
    const file = path.join(OUTPUT, 'report.html');
    writeFileSync(file, html);

    // Self-contained: no URL is fetched when it is opened.
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    // The hostile check and group names appear only escaped.
    expect(html).not.toContain(HOSTILE_CHECK);
    expect(html).toContain(
      '&lt;/script&gt;&lt;img src=x onerror=&quot;document.title=1&quot;&gt; status is 200',
    );
    expect(html).toContain('cart &amp; &lt;b&gt;checkout&lt;/b&gt;');

    const screenshot = path.join(OUTPUT, 'report.png');
    const { dom } = openInChromium(chromium, file, screenshot);
    const body = /<body([^>]*)>/.exec(dom)![1]!;
    expect(body).not.toContain('data-chart-error');
    // Three charts over time and the percentiles, each canvas with pixels drawn on it.
    expect(body).toContain('data-charts="4"');
    expect(body).toContain('data-painted="4"');
    const canvases = [...dom.matchAll(/<canvas id="([^"]+)"[^>]*width="(\d+)"[^>]*height="(\d+)"/g)];
    expect(canvases.map((c) => c[1]).sort()).toEqual([
      'chart-errors',
      'chart-latency',
      'chart-percentiles',
      'chart-rps',
    ]);
    for (const c of canvases) expect(Number(c[2]) * Number(c[3])).toBeGreaterThan(10_000);
    // The injected markup stayed text: no element was created from it.
    expect(dom).not.toMatch(/<img src="x"/);
    expect(dom).toContain('Compared with the baseline (main @ 1a2b3c4)');
    // The change of each key metric in words (as compareResults judged it), not in emoji.
    const cellOf = (d: (typeof comparison.keyMetrics)[number]) => {
      if (d.change === 'worse')
        return d.gated ? '<span class="bad">worse</span>' : '<span class="warn">worse (not gated)</span>';
      if (d.change === 'better') return '<span class="ok">better</span>';
      return d.change === 'unchanged' ? 'within tolerance' : '—';
    };
    for (const d of comparison.keyMetrics) {
      const cell = cellOf(d);
      const row = dom.split('<tr>').find((r) => r.startsWith(`<td>${d.label}</td>`));
      expect(row?.includes(`<td>${cell}</td></tr>`), `${d.label}: ${row}`).toBe(true);
    }
    expect(statSync(screenshot).size).toBeGreaterThan(20_000);
  });
});
