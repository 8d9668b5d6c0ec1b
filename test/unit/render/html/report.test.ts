import { describe, expect, it } from 'vitest';
import { escapeHtml, scriptJson } from '../../../../src/render/html/page.ts';
import { renderHtmlReport } from '../../../../src/render/html/report.ts';
import { RESULT_SCHEMA, type RunResult } from '../../../../src/result/schema.ts';

// The document's text without a browser; html-report.test.ts opens real reports in Chromium.

function result(): RunResult {
  return {
    schema: RESULT_SCHEMA,
    verdict: 'passed',
    failures: [],
    thresholdsOk: true,
    script: 'load <test>.js',
    environment: { backend: 'kubernetes', k6Version: 'v2.2.0', runners: 2, scriptHash: 'abc' },
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:10.000Z',
    durationS: 10,
    startSkewMs: 1.5,
    metrics: {
      http_reqs: { type: 'counter', contains: 'default', values: { count: 1000, rate: 100 } },
      http_req_duration: {
        type: 'trend',
        contains: 'time',
        values: { count: 1000, min: 1, max: 900, avg: 50, med: 40, 'p(90)': 80, 'p(95)': 120, 'p(99)': 300 },
        thresholds: { 'p(95)<200': { ok: true, observed: 120 } },
      },
    },
    rootGroup: { name: '', path: '', groups: [], checks: [] },
    thresholds: [
      { metric: 'http_req_duration', expression: 'p(95)<200', ok: true, observed: 120, abortOnFail: false },
    ],
    runners: [
      {
        index: 0,
        segment: '0:1/2',
        exitCode: 0,
        exit: 'completed',
        ok: true,
        startOffsetMs: 0,
        node: 'node-<a>',
      },
      { index: 1, segment: '1/2:1', exitCode: 0, exit: 'completed', ok: true, startOffsetMs: 3.2 },
    ],
  };
}

describe('renderHtmlReport without a series or a baseline', () => {
  const html = renderHtmlReport({ result: result() });

  it('says there is no time series and draws only the percentiles, in rank order', () => {
    expect(html).toContain('This result has no time series.');
    expect(html).not.toContain('id="chart-rps"');
    expect(html).toContain('id="chart-percentiles"');
    expect(html).not.toContain('Compared with the baseline');
    const data = JSON.parse(
      /<script type="application\/json" id="k6d-data">(.*?)<\/script>/s.exec(html)![1]!,
    );
    expect(data.percentiles).toEqual({
      labels: ['min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
      head: [1, 40, 80, 120, 300, 900],
    });
  });

  it('shows the threshold with its observed value, the verdict and the runners with their start offsets', () => {
    expect(html).toContain('<span class="verdict passed">PASSED</span>');
    expect(html).toMatch(/<code>p\(95\)&lt;200<\/code><\/td><td class="num">120.00ms<\/td>/);
    expect(html).toMatch(/<td class="num">1<\/td><td><code>1\/2:1<\/code><\/td><td class="num">3.20ms<\/td>/);
    expect(html).toContain('<code>load &lt;test&gt;.js</code>');
    expect(html).toContain('node-&lt;a&gt;');
  });

  it('escapes text for HTML and JSON for a <script> element', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const json = scriptJson({ name: '</script><script>alert(1)</script>\u2028' });
    expect(json).not.toContain('<');
    expect(json).not.toContain('\u2028');
    expect(JSON.parse(json).name).toBe('</script><script>alert(1)</script>\u2028');
  });
});

describe('the dashboard link', () => {
  it('links the run, its time range and its id, escaped as an attribute', () => {
    const html = renderHtmlReport({
      result: { ...result(), runId: 'rk1' },
      dashboardUrl: 'https://g.example.com/d/k6?a=1&b="x"',
    });
    const from = Date.parse('2026-01-01T00:00:00.000Z');
    const to = Date.parse('2026-01-01T00:00:10.000Z');
    expect(html).toContain(
      `<p><a href="https://g.example.com/d/k6?a=1&amp;b=%22x%22&amp;from=${from}&amp;to=${to}&amp;var-k6d_run=rk1">Dashboard of this run</a> (run <code>rk1</code>)</p>`,
    );
    expect(renderHtmlReport({ result: result() })).not.toContain('Dashboard of this run');
  });
});
