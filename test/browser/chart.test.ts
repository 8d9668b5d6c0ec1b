import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { timelineMarkdown, trendMarkdown } from '../../src/render/chart.ts';
import { escapeHtml } from '../../src/render/html/page.ts';
import { TIMELINE_SCHEMA, type Timeline } from '../../src/result/timeline-schema.ts';
import { ROOT } from '../support/cli.ts';
import { ensureChromium, openInChromium } from './support/chromium.ts';

// What GitHub does with a ```mermaid block, done here: Mermaid's browser build renders each
// diagram to SVG in real headless Chromium. chart.test.ts checks the syntax with Mermaid's parser.

const OUTPUT = path.join(ROOT, 'test', '.output', 'mermaid');

let chromium: string;
beforeAll(() => {
  chromium = ensureChromium();
  mkdirSync(OUTPUT, { recursive: true });
  copyFileSync(
    path.join(ROOT, 'node_modules/mermaid/dist/mermaid.min.js'),
    path.join(OUTPUT, 'mermaid.min.js'),
  );
});

const timeline: Timeline = {
  schema: TIMELINE_SCHEMA,
  intervalS: 5,
  latencyMetric: 'http_req_duration',
  p95Scope: 'since-start',
  points: Array.from({ length: 24 }, (_, i) => ({
    tS: (i + 1) * 5,
    intervalS: 5,
    requests: 2000 + 40 * i,
    rps: (2000 + 40 * i) / 5,
    vus: 50,
    errorRate: 0,
    p95MinMs: 40 + (i % 3),
    p95MaxMs: 48 + (i % 4),
    runners: 3,
  })),
};

describe('Mermaid charts in a browser', () => {
  it('render as xychart SVGs with one path per line', () => {
    const markdown = [
      timelineMarkdown(timeline),
      trendMarkdown({
        metric: 'p95',
        unit: 'ms',
        history: ['a1b2c3d', 'b2c3d4e', 'c3d4e5f', 'd4e5f6a', 'e5f6a7b'].map((label, i) => ({
          label,
          value: 40 + i,
        })),
        head: { label: 'PR 42', value: 51 },
        range: { low: 37.5, high: 46.5 },
      }),
    ].join('\n\n');
    const diagrams = [...markdown.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
    expect(diagrams).toHaveLength(3);
    const page = [
      '<!DOCTYPE html><html><head><meta charset="utf-8"><script src="mermaid.min.js"></script></head><body>',
      ...diagrams.map((d, i) => `<pre class="mermaid" id="d${i}">${escapeHtml(d)}</pre>`),
      '<script>',
      'mermaid.initialize({ startOnLoad: false });',
      "mermaid.run({ querySelector: '.mermaid' })",
      "  .then(() => document.body.setAttribute('data-rendered', document.querySelectorAll('.mermaid svg').length))",
      "  .catch((e) => document.body.setAttribute('data-error', String(e)));",
      '</script></body></html>',
    ].join('\n');
    const file = path.join(OUTPUT, 'charts.html');
    writeFileSync(file, page);
    const { dom } = openInChromium(chromium, file, path.join(OUTPUT, 'charts.png'));
    const body = /<body([^>]*)>/.exec(dom)![1]!;
    expect(body).not.toContain('data-error');
    expect(body).toContain('data-rendered="3"');
    const svgs = dom.split('<svg').slice(1);
    expect(svgs).toHaveLength(3);
    for (const svg of svgs) expect(svg).toContain('aria-roledescription="xychart"');
    // RPS: one line; p95: the band's two lines; trend: history+PR and the two range lines.
    const lines = svgs.map((svg) => (svg.match(/class="line-plot-\d+"/g) ?? []).length);
    expect(lines).toEqual([1, 2, 3]);
  });
});
