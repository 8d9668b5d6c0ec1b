import { describe, expect, it } from 'vitest';
import { extractSummary } from '../../../src/backends/kubernetes/log-summary.ts';
import { compactSummary } from '../../../src/k6/compact-summary.ts';
import { COMPACT_SUMMARY_FORMAT, parseRunnerSummary } from '../../../src/k6/summary.ts';
import { QUANTILE_GRID } from '../../../src/result/quantile-grid.ts';
import { mergePercentiles } from '../../../src/result/quantiles.ts';

/** What k6/encoding's b64encode does inside k6. */
const nodeB64 = (buffer: ArrayBuffer) => Buffer.from(buffer).toString('base64');

describe('parseRunnerSummary', () => {
  it('reads a trend whose percentile keys come out of order (threshold percentiles appended) as a sorted grid', () => {
    const summary = parseRunnerSummary(
      JSON.stringify({
        metrics: {
          http_req_duration: {
            count: 1000,
            min: 1,
            max: 100,
            avg: 20,
            med: 10,
            'p(10)': 2,
            'p(50)': 10,
            'p(99)': 90,
            'p(97.5)': 60,
            'p(90)': 40,
            foo: 3,
          },
        },
        root_group: { name: '', path: '', groups: {}, checks: {} },
      }),
    );
    const trend = summary.metrics.http_req_duration!;
    expect(trend.type).toBe('trend');
    if (trend.type !== 'trend') return;
    expect(trend.grid.points).toEqual([
      [0.1, 2],
      [0.5, 10],
      [0.9, 40],
      [0.975, 60],
      [0.99, 90],
    ]);
    // One runner: its own percentiles come back.
    expect(mergePercentiles([trend.grid], [50, 97.5, 99])).toEqual([10, 60, 90]);
  });

  it('refuses a trend without its count, naming it', () => {
    const json = JSON.stringify({ metrics: { t: { min: 1, max: 2, avg: 1.5, 'p(50)': 1.5 } } });
    expect(() => parseRunnerSummary(json)).toThrow(/summary of trend t has no count/);
  });

  it('reads the compact summary: trends packed in the stats order, a stat k6 left out skipped', () => {
    const text = compactSummary(
      {
        options: { summaryTrendStats: ['count', 'min', 'max', 'avg', 'med', 'p(99)', 'p(10)', 'p(50)'] },
        metrics: {
          // 'p(10)' missing (k6 would give every stat; a gap must not read as 0).
          'http_req_duration{name:a}': {
            type: 'trend',
            contains: 'time',
            values: { count: 100, min: 1, max: 100, avg: 20, med: 10, 'p(99)': 90, 'p(50)': 10 },
          },
          http_reqs: { type: 'counter', contains: 'default', values: { count: 100, rate: 10 } },
          vus: { type: 'gauge', contains: 'default', values: { value: 2, min: 1, max: 3 } },
          checks: { type: 'rate', contains: 'default', values: { rate: 0.5, passes: 1, fails: 1 } },
        },
        root_group: {
          name: '',
          path: '',
          id: 'x',
          groups: [],
          checks: [{ name: 'ok', path: '::ok', id: 'y', passes: 1, fails: 1 }],
        },
      },
      nodeB64,
    );
    const lines = text.trimEnd().split('\n');
    // As extractSummary reads a Pod log: braces alone, everything between indented.
    expect([lines[0], lines.at(-1)]).toEqual(['{', '}']);
    expect(lines.slice(1, -1).every((l) => /^\s/.test(l))).toBe(true);
    expect(JSON.parse(text).format).toBe(COMPACT_SUMMARY_FORMAT);
    const summary = parseRunnerSummary(text);
    const trend = summary.metrics['http_req_duration{name:a}']!;
    expect(trend).toMatchObject({ type: 'trend', count: 100, min: 1, max: 100, avg: 20 });
    if (trend.type !== 'trend') return;
    const [p50, p99] = mergePercentiles([trend.grid], [50, 99]);
    expect(p50).toBe(10);
    expect(p99).toBeCloseTo(90, 9);
    expect(summary.metrics.http_reqs).toEqual({ type: 'counter', count: 100, rate: 10 });
    expect(summary.metrics.vus).toEqual({ type: 'gauge', value: 2, min: 1, max: 3 });
    expect(summary.metrics.checks).toEqual({ type: 'rate', passes: 1, fails: 1 });
    expect(summary.durationS).toBe(10);
    expect(summary.rootGroup.checks).toEqual([{ name: 'ok', path: '::ok', passes: 1, fails: 1 }]);
  });

  /** Two trends over the same stats, non-ASCII names, as a runner writes them. */
  const twoTrends = (stats: string[]) =>
    compactSummary(
      {
        options: { summaryTrendStats: stats },
        metrics: {
          'tränd{name:ü}': {
            type: 'trend',
            contains: 'time',
            values: { count: 4, min: 1, max: 9, avg: 4, 'p(50)': 3, 'p(90)': 8 },
          },
          other: {
            type: 'trend',
            values: { count: 2, min: 5, max: 6, avg: 5.5, 'p(50)': 5.5, 'p(90)': 5.9 },
          },
          http_reqs: { type: 'counter', values: { count: 6, rate: 2 } },
        },
        root_group: { name: '', path: '', groups: {}, checks: {} },
      },
      nodeB64,
    );

  it('reads the compact summary the same from its text, its bytes and with CRLF line ends', () => {
    const text = twoTrends(['count', 'avg', 'min', 'p(50)', 'p(90)', 'max']);
    const fromText = parseRunnerSummary(text);
    const grid = (s: typeof fromText, name: string) => {
      const m = s.metrics[name]!;
      return m.type === 'trend' ? [m.count, m.min, m.max, m.avg, ...m.grid.points.flat()] : [];
    };
    expect(grid(fromText, 'tränd{name:ü}')).toEqual([4, 1, 9, 4, 0.5, 3, 0.9, 8]);
    expect(grid(fromText, 'other')).toEqual([2, 5, 6, 5.5, 0.5, 5.5, 0.9, 5.9]);
    for (const other of [
      Buffer.from(text),
      new Uint8Array(Buffer.from(text)),
      text.replaceAll('\n', '\r\n'),
    ]) {
      const s = parseRunnerSummary(other);
      expect(Object.keys(s.metrics)).toEqual(Object.keys(fromText.metrics));
      expect(grid(s, 'tränd{name:ü}')).toEqual(grid(fromText, 'tränd{name:ü}'));
      expect(grid(s, 'other')).toEqual(grid(fromText, 'other'));
      expect(s.durationS).toBe(3);
    }
    // Another stats list right after (the reader keeps the last one's layout): read with its own.
    const reordered = parseRunnerSummary(twoTrends(['p(90)', 'count', 'max', 'p(50)', 'min', 'avg']));
    expect(grid(reordered, 'other')).toEqual([2, 5, 6, 5.5, 0.5, 5.5, 0.9, 5.9]);
  });

  it('writes no line over 16 KiB (a container runtime splits longer ones), and reads a real-sized one back through a Pod log', () => {
    // 20 trends × the real grid, as a runner of a script with thresholds on submetrics writes it.
    const stats = ['count', 'min', 'max', 'avg', ...QUANTILE_GRID.map((q) => `p(${q})`)];
    const metrics: Record<string, { type: string; contains?: string; values: Record<string, number> }> = {};
    for (let t = 0; t < 20; t++) {
      const values: Record<string, number> = { count: 1000 + t, min: 0.5, max: 900, avg: 40 };
      QUANTILE_GRID.forEach((q, i) => {
        values[`p(${q})`] = 1 + i * 0.25 + t;
      });
      metrics[`trend_${t}`] = { type: 'trend', contains: 'time', values };
    }
    const text = compactSummary({ metrics, root_group: {}, options: { summaryTrendStats: stats } }, nodeB64);
    expect(text.length).toBeGreaterThan(200_000);
    expect(Math.max(...text.split('\n').map((line) => Buffer.byteLength(line)))).toBeLessThan(16 * 1024);
    // A k6 log line on stderr lands between two of its lines in the Pod log: set aside, and the
    // summary reads whole.
    const lines = text.trimEnd().split('\n');
    const at = lines.findIndex((line) => line.startsWith('  "')) + 3;
    const log = [
      ...lines.slice(0, at),
      'time="…" level=info msg="Stopping k6 in response to signal..."',
      ...lines.slice(at),
    ];
    const { summary, rest } = extractSummary(log.join('\n'));
    expect(rest).toContain('Stopping k6');
    const read = parseRunnerSummary(summary!);
    const t7 = read.metrics.trend_7!;
    expect(t7.type === 'trend' && [t7.count, t7.grid.points.length]).toEqual([1007, QUANTILE_GRID.length]);
  });

  it('refuses a compact summary whose trends lines are cut or missing, and one of another format', () => {
    const text = twoTrends(['count', 'avg', 'min', 'p(50)', 'p(90)', 'max']);
    const cut = text.replace(/"trends": \[\n {2}"(.{8})[^"]*"/, '"trends": [\n  "$1"');
    expect(() => parseRunnerSummary(cut)).toThrow(/trends lines have 8 characters for 2 trends × 6 stats/);
    expect(() => parseRunnerSummary(Buffer.from(text.replace(/,\n "trends": \[[^\]]*\]/, '')))).toThrow(
      /compact summary is cut short/,
    );
    // A log cut inside the trends lines (no closing quote on the last one before ` ]`).
    const open = text.replace(/"\n \]\n\}/, '\n ]\n}');
    expect(() => parseRunnerSummary(open)).toThrow(/cut short/);
    const older = JSON.stringify({ format: 'k6d-summary/2', stats: [], metrics: {} });
    expect(() => parseRunnerSummary(older)).toThrow(/format k6d-summary\/2, not k6d-summary\/3/);
  });
});
