import { describe, expect, it } from 'vitest';
import { escapeMarkdown, formatMs, inlineCode } from '../../../src/render/format.ts';
import { renderReport } from '../../../src/render/markdown.ts';
import { RESULT_SCHEMA, type RunResult } from '../../../src/result/schema.ts';

function result(overrides: Partial<RunResult> = {}): RunResult {
  return {
    schema: RESULT_SCHEMA,
    verdict: 'failed',
    failures: ['thresholds crossed on the aggregate: http_req_duration p(95)<100'],
    thresholdsOk: false,
    script: 'load.js',
    environment: { backend: 'local', k6Version: 'v2.2.0', runners: 2, scriptHash: 'abc' },
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:10.000Z',
    durationS: 10,
    startSkewMs: 1.5,
    metrics: {
      http_reqs: { type: 'counter', contains: 'default', values: { count: 1000, rate: 100 } },
      http_req_duration: {
        type: 'trend',
        contains: 'time',
        values: {
          count: 1000,
          min: 1,
          max: 900,
          avg: 50,
          med: 40,
          'p(50)': 40,
          'p(90)': 80,
          'p(95)': 120,
          'p(99)': 300,
        },
      },
      http_req_failed: { type: 'rate', contains: 'default', values: { rate: 0.01, passes: 10, fails: 990 } },
    },
    rootGroup: {
      name: '',
      path: '',
      groups: [],
      checks: [
        {
          name: '<img src=x onerror=alert(1)> | `x`',
          path: '::<img src=x onerror=alert(1)> | `x`',
          passes: 9,
          fails: 1,
        },
      ],
    },
    thresholds: [
      { metric: 'http_req_duration', expression: 'p(95)<100', ok: false, observed: 120, abortOnFail: false },
    ],
    runners: [
      {
        index: 0,
        segment: '0:1/2',
        exitCode: 0,
        exit: 'exit 0: completed',
        ok: true,
        startOffsetMs: 0,
        requests: 500,
        rps: 50,
        p95Ms: 110,
      },
      {
        index: 1,
        segment: '1/2:1',
        exitCode: 0,
        exit: 'exit 0: completed',
        ok: true,
        startOffsetMs: 1.5,
        requests: 500,
        rps: 50,
        p95Ms: 130,
      },
    ],
    ...overrides,
  };
}

describe('markdown report', () => {
  const md = renderReport(result());

  it('shows the verdict, the reason and the observed threshold value', () => {
    expect(md).toContain('❌ failed');
    expect(md).toContain('thresholds crossed on the aggregate');
    expect(md).toMatch(/\| `http_req_duration` \| `p\(95\)<100` \| 120\.00ms \| ❌ fail \|/);
    expect(md).toContain('1,000 (100.0/s)');
    expect(md).toContain('40.00ms / 80.00ms / 120.00ms / 300.00ms');
    expect(md).toContain('start skew 1.50ms');
  });

  it('cannot be broken by names from the script', () => {
    expect(md).not.toContain('<img');
    const checkRow = md.split('\n').find((l) => l.includes('onerror'))!;
    // 4 cells -> 5 unescaped pipes, whatever the check name holds.
    expect(checkRow.match(/(?<!\\)\|/g)).toHaveLength(5);
    expect(escapeMarkdown('a|b')).toBe('a\\|b');
    expect(escapeMarkdown('@org/team')).not.toMatch(/@[a-z]/);
  });

  it('makes no link, reference or reversed text of user text (issue 25)', () => {
    const z = '\u200b';
    expect(escapeMarkdown('https://a.example www.b.example #12 GH-3')).toBe(
      `https${z}://a.example www${z}.b.example \\#${z}12 GH\\-${z}3`,
    );
    expect(escapeMarkdown('a\u202Eb\u200Fc\u2066')).toBe('a\\[U\\+202E\\]b\\[U\\+200F\\]c\\[U\\+2066\\]');
    // Code is never linked by GitHub: only the bidi controls change, so the text can be copied.
    expect(inlineCode('http://x \u202E')).toBe('`http://x [U+202E]`');
  });

  it('prints durations the way k6 does', () => {
    expect([formatMs(0.5), formatMs(12.345), formatMs(1500)]).toEqual(['500µs', '12.35ms', '1.50s']);
  });
});
