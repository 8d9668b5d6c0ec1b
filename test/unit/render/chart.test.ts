// @vitest-environment jsdom
// Mermaid's parser runs in Node but sanitises titles with DOMPurify, which needs a DOM: jsdom gives it one.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_CHART_LIMITS,
  downsample,
  mermaidLabel,
  timelineCharts,
  timelineMarkdown,
  trendMarkdown,
} from '../../../src/render/chart.ts';
import { TIMELINE_SCHEMA, type Timeline, type TimelinePoint } from '../../../src/result/timeline-schema.ts';

type Mermaid = typeof import('mermaid').default;
let mermaid: Mermaid;

beforeAll(async () => {
  mermaid = (await import('mermaid')).default;
});

/** Every ```mermaid block of a Markdown text. */
function blocks(markdown: string): string[] {
  return [...markdown.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
}

function timeline(n: number, runners = 2): Timeline {
  const points: TimelinePoint[] = Array.from({ length: n }, (_, i) => ({
    tS: (i + 1) * 5,
    intervalS: 5,
    requests: 500 + i,
    rps: (500 + i) / 5,
    vus: 10,
    errorRate: i % 7 === 0 ? 0.01 : 0,
    avgMs: 20 + (i % 5),
    p95MinMs: 40 + (i % 3),
    p95MaxMs: runners > 1 ? 45 + (i % 4) : 40 + (i % 3),
    runners,
  }));
  return {
    schema: TIMELINE_SCHEMA,
    intervalS: 5,
    latencyMetric: 'http_req_duration',
    p95Scope: 'since-start',
    points,
  };
}

describe('timeline charts', () => {
  it('writes an RPS chart and a p95 band chart that the real Mermaid parser accepts as xychart', async () => {
    const md = timelineMarkdown(timeline(30));
    const diagrams = blocks(md);
    expect(diagrams).toHaveLength(2);
    for (const d of diagrams) expect(await mermaid.parse(d)).toMatchObject({ diagramType: 'xychart' });
    expect(diagrams[0]).toMatch(/title "Requests per second \(every 5 s\)"/);
    expect(diagrams[0]!.match(/^ {2}line \[/gm)).toHaveLength(1);
    expect(diagrams[0]).toContain('line [100, 100.2, 100.4');
    // Two runners with different p95: two lines, the band.
    expect(diagrams[1]!.match(/^ {2}line \[/gm)).toHaveLength(2);
    expect(diagrams[1]).toContain('slowest and fastest runner');
  });

  it('draws one p95 line when the band is exact (one runner)', async () => {
    const [, p95] = timelineCharts(timeline(10, 1));
    expect(p95!.match(/^ {2}line \[/gm)).toHaveLength(1);
    expect(await mermaid.parse(p95!)).toMatchObject({ diagramType: 'xychart' });
  });

  it('merges a long run into at most maxPoints buckets without losing requests', () => {
    const long = timeline(721); // an hour at 5 s
    const merged = downsample(long.points, 60);
    expect(merged.length).toBeLessThanOrEqual(60);
    const total = (ps: TimelinePoint[]) => ps.reduce((a, p) => a + p.requests, 0);
    expect(total(merged)).toBe(total(long.points));
    expect(merged.at(-1)!.tS).toBe(long.points.at(-1)!.tS);
    const rps = blocks(timelineMarkdown(long))[0]!;
    expect(rps.match(/line \[([^\]]*)\]/)![1]!.split(',').length).toBeLessThanOrEqual(60);
  });

  it('falls back to a table when the charts would exceed the size limit, and to nothing for no points', () => {
    const charts = timelineMarkdown(timeline(24));
    expect(charts).toContain('```mermaid');
    const md = timelineMarkdown(timeline(24), { maxChars: charts.length - 1 });
    expect(md).not.toContain('```mermaid');
    expect(md.length).toBeLessThan(charts.length);
    expect(md.split('\n')[0]).toBe('| time since start | req/s | VUs | errors | p95 since start (ms) |');
    // The full table (24 rows) is longer than the charts: it is halved to 12 rows of 2 points each.
    expect(md.split('\n').length).toBe(2 + 12);
    expect(md).toContain('| 10s | 100.1 | 10 | 0.50% | 41–46 |');
    expect(timelineMarkdown(timeline(24), { maxChars: 5000, maxPoints: 1 })).toContain(
      '| 5s | 100 | 10 | 1.00% | 40–45 |',
    );
    expect(timelineMarkdown(timeline(1))).toMatch(/^\| time since start/);
    expect(timelineMarkdown(timeline(0))).toBe('');
    expect(timelineMarkdown(timeline(30)).length).toBeLessThanOrEqual(DEFAULT_CHART_LIMITS.maxChars);
  });
});

describe('trend chart', () => {
  const history = ['a1b2c3d', 'b2c3d4e', 'c3d4e5f', 'd4e5f6a', 'e5f6a7b'].map((label, i) => ({
    label,
    value: 40 + i,
  }));

  it('shows the history across commits with the PR as the named last point and the normal range', async () => {
    const md = trendMarkdown({
      metric: 'p95',
      unit: 'ms',
      history,
      head: { label: 'PR 42', value: 51 },
      range: { low: 37.5, high: 46.5 },
    });
    const [d] = blocks(md);
    expect(await mermaid.parse(d!)).toMatchObject({ diagramType: 'xychart' });
    expect(d).toContain('"a1b2c3d", "b2c3d4e", "c3d4e5f", "d4e5f6a", "e5f6a7b", "PR 42"');
    expect(d).toContain('line [40, 41, 42, 43, 44, 51]');
    expect(d).toContain('line [46.5, 46.5, 46.5, 46.5, 46.5, 46.5]');
    expect(d).toMatch(
      /title "p95 \(ms\) over the last 5 base runs, last point PR 42, flat lines: normal range"/,
    );
  });

  it('shows rates in percent, keeps hostile labels out of the Mermaid syntax and the table', async () => {
    const md = trendMarkdown({
      metric: 'error-rate',
      unit: 'pp',
      history: [
        { label: 'x" ]\nline [9', value: 0.01 },
        { label: '#quot;', value: 0.02 },
      ],
      head: { label: 'PR <b>', value: 0.05 },
    });
    const [d] = blocks(md);
    expect(await mermaid.parse(d!)).toMatchObject({ diagramType: 'xychart' });
    expect(d!.match(/^ {2}line \[/gm)).toHaveLength(1);
    expect(d).toContain('line [1, 2, 5]');
    expect(mermaidLabel('x" ]\nline [9')).toBe('x line 9');
    const table = trendMarkdown(
      { metric: 'p95', unit: 'ms', history, head: { label: 'PR <b>', value: 51 } },
      { maxChars: 100 },
    );
    expect(table).not.toContain('```');
    expect(table).toContain('**PR &lt;b&gt;**');
    expect(table.split('\n')[2]).toBe('| | 40 | 41 | 42 | 43 | 44 | 51 |');
  });

  it('is a table when there is no history yet', () => {
    const md = trendMarkdown({ metric: 'rps', unit: '/s', history: [], head: { label: 'PR 1', value: 500 } });
    expect(md).toBe('| rps (req/s) | **PR 1** |\n|---|---:|\n| | 500 |');
    expect(
      trendMarkdown({
        metric: 'rps',
        unit: '/s',
        history: [],
        head: { label: 'PR 1', value: 500 },
        skipped: 3,
      }),
    ).toMatch(/\n\n_3 base runs skipped: result artifact missing or expired\._$/);
  });
});

describe('latency per interval', () => {
  function withLatency(n: number): Timeline {
    const points = Array.from({ length: n }, (_, i) => ({
      tS: round3((i + 1) * 0.2),
      count: 40,
      p50: 10 + (i % 3),
      p90: 20,
      p95: i === 30 ? 90 : 25 + (i % 2),
      p99: 40,
    }));
    return {
      ...timeline(4),
      latency: {
        source: 'prometheus-rw-native-histograms',
        intervalS: 0.2,
        bucketHalfWidth: 0.0443,
        metrics: [{ metric: 'http_req_duration{expected_response:true}', unit: 'ms', points }],
      },
    };
  }
  const round3 = (x: number) => Math.round(x * 1000) / 1000;

  it('replaces the since-start band with p95 and p50 per interval, and keeps a spike when merging', async () => {
    const charts = timelineCharts(withLatency(60));
    expect(charts).toHaveLength(2);
    expect(charts[1]).toContain('title "Latency per 0.2 s (ms): p95 (upper line) and p50"');
    expect(charts.join('\n')).not.toContain('p95 latency since start');
    await mermaid.parse(charts[1]!);
    const merged = timelineCharts(withLatency(60), 20)[1]!;
    expect(merged).toContain(
      'title "Latency per 0.6 s (ms): highest p95 (upper line) and p50 of each 0.6 s"',
    );
    // Interval 31's spike (90 ms) survives the merge of three intervals into one point.
    expect(merged).toMatch(/line \[[^\]]*\b90\b/);
  });
});
