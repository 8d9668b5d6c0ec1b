import { describe, expect, it } from 'vitest';
import {
  humanizeBytes,
  humanizeDuration,
  humanizeStat,
  humanizeValue,
} from '../../../src/render/terminal/humanize.ts';
import { renderTerminalReport } from '../../../src/render/terminal/report.ts';
import { terminalText, visibleWidth, wantsColor } from '../../../src/render/terminal/style.ts';
import type { RunResult } from '../../../src/result/schema.ts';
import { makeResult } from '../../support/results.ts';

/*
 * The CLI's terminal report (src/render/terminal/): k6's end-of-test layout read on the aggregate,
 * plain text without markdown escapes, colour only when asked, the user's text inert. The same
 * report through a real terminal (tmux) and a pipe: test/e2e/terminal-report.test.ts.
 */

const ESC = '\x1b';
const stripEscapes = (s: string) => s.replaceAll(new RegExp(`${ESC}\\[[0-9;]*m`, 'g'), '');

/** A failed run whose names hold what markdown escaped (`<`, `&`, `(`, `-`, `_`). */
function hostile(): RunResult {
  const r = makeResult({ verdict: 'failed', p95: 512.3 });
  r.thresholds = [
    { metric: 'http_req_duration', expression: 'p(95)<500', ok: false, observed: 512.3, abortOnFail: false },
    { metric: 'checks', expression: 'rate>0.99', ok: true, observed: 0.999, abortOnFail: false },
  ];
  r.metrics.my_trend = {
    type: 'trend',
    contains: 'time',
    values: { avg: 1, min: 0.5, med: 1, max: 2, 'p(90)': 1.5, 'p(95)': 1.9 },
  };
  r.metrics.data_received = { type: 'counter', contains: 'data', values: { count: 8900, rate: 591000 } };
  r.rootGroup.groups.push({
    name: 'k6d-loadtest-8',
    path: '::k6d-loadtest-8',
    groups: [],
    checks: [{ name: 'count<6 & (x)', path: '::k6d-loadtest-8::count<6 & (x)', passes: 4, fails: 2 }],
  });
  r.runners[1] = {
    ...r.runners[1]!,
    ok: false,
    exitCode: 108,
    exit: 'exit 108: test.abort() (script_aborted)',
  };
  return r;
}

/** The lines of a report section, from its title to the next `█`. */
function section(report: string, title: string): string[] {
  const lines = report.split('\n');
  const start = lines.findIndex((l) => l.includes(`█ ${title}`));
  const end = lines.findIndex((l, i) => i > start && l.includes('█ '));
  return lines.slice(start + 1, end < 0 ? undefined : end).filter((l) => l.trim() !== '');
}

describe('renderTerminalReport', () => {
  it('reads as k6 lays it out: thresholds with their observed values, totals in k6 groups, runners, verdict', () => {
    const out = renderTerminalReport(hostile(), { color: false });
    const titles = out
      .split('\n')
      .filter((l) => l.includes('█ '))
      .map((l) => l.trim());
    expect(titles).toEqual([
      '█ k6 distributed run: examples/quickstart.js',
      '█ THRESHOLDS (judged on the aggregate of all runners)',
      '█ TOTAL RESULTS',
      '█ RUNNERS (start skew 1.70ms)',
      '█ VERDICT',
    ]);
    expect(section(out, 'THRESHOLDS')).toEqual([
      '    checks',
      "    ✓ 'rate>0.99' rate=99.90%",
      '    http_req_duration',
      "    ✗ 'p(95)<500' p(95)=512.3ms",
    ]);
    const total = section(out, 'TOTAL RESULTS').map((l) => l.trim());
    // Custom metrics first, then k6's groups in its order; k6's compact mode leaves `checks` out.
    expect(total.filter((l) => /^[A-Z_]+$/.test(l))).toEqual(['CUSTOM', 'HTTP', 'EXECUTION', 'NETWORK']);
    expect(total).toContain('✗ k6d-loadtest-8 › count<6 & (x)');
    expect(total).toContain('↳  66% — ✓ 4 / ✗ 2');
    expect(total.some((l) => l.startsWith('data_received') && l.endsWith(': 8.9 kB 591 kB/s'))).toBe(true);
    expect(section(out, 'VERDICT')).toEqual([
      '    ✗ failed',
      '      ↳ thresholds crossed on the aggregate: http_req_duration p(95)<20',
    ]);
  });

  it('has no markdown escape and no escape byte without colour', () => {
    const out = renderTerminalReport(hostile(), { color: false });
    expect(out).not.toContain(ESC);
    for (const escaped of ['&lt;', '&amp;', '\\(', '\\-', '\\_', '`', '|---', '**'])
      expect(out).not.toContain(escaped);
    expect(out).toContain('count<6 & (x)');
    expect(out).toContain('exit 108: test.abort() (script_aborted)');
  });

  it('lines its columns up: the dots end in one column, trend stats and runner cells start in one column', () => {
    const out = renderTerminalReport(hostile(), { color: false });
    const metrics = section(out, 'TOTAL RESULTS').filter((l) => /\.{3,}:/.test(l) && !l.includes('checks_'));
    expect(metrics.length).toBeGreaterThan(6);
    const colon = (l: string) => {
      const dots = /\.{3,}:/.exec(l)!;
      return dots.index + dots[0].length;
    };
    expect(new Set(metrics.map(colon)).size).toBe(1);
    const trends = metrics.filter((l) => l.includes('avg='));
    for (const stat of ['min=', 'med=', 'max=', 'p(90)=', 'p(95)=']) {
      expect(new Set(trends.map((l) => l.indexOf(stat))).size, stat).toBe(1);
    }
    const [header, ...rows] = section(out, 'RUNNERS').slice(0, 3);
    // Numbers right-aligned under their header's last letter; text left-aligned under its first.
    expect(rows.map((r) => r.indexOf('0:1/2') >= 0 || r.indexOf('1/2:1') >= 0)).toEqual([true, true]);
    const rightEdge = (line: string, word: string) => line.indexOf(word) + word.length;
    expect(rightEdge(rows[0]!, '200/s'.replace('200', '200.0'))).toBe(rightEdge(header!, 'rps'));
    expect(rows[0]!.indexOf('✓')).toBe(header!.indexOf('exit'));
    expect(rows[1]!.indexOf('✗')).toBe(header!.indexOf('exit'));
  });

  it('paints ✓ green and ✗ red when asked, and is otherwise the same text', () => {
    const plain = renderTerminalReport(hostile(), { color: false });
    const coloured = renderTerminalReport(hostile(), { color: true });
    expect(coloured).toContain(`${ESC}[32m✓${ESC}[0m 'rate>0.99'`);
    expect(coloured).toContain(`${ESC}[31m✗${ESC}[0m 'p(95)<500'`);
    expect(coloured).toContain(`${ESC}[31m✗ k6d-loadtest-8 › count<6 & (x)${ESC}[0m`);
    expect(stripEscapes(coloured)).toBe(plain);
  });

  it("keeps the script's text inert: no escape sequence, no line break, bidi controls shown", () => {
    const r = hostile();
    r.rootGroup.checks[0]!.path = `::title\x1b]0;pwned\x07\nnext \u202Egnp.exe`;
    const out = renderTerminalReport(r, { color: true });
    expect(stripEscapes(out)).toContain('✗ title\\x1B]0;pwned\\x07 next [U+202E]gnp.exe');
    expect(stripEscapes(out)).not.toContain(ESC);
    expect(terminalText('a\u009bb\u007f')).toBe('a\\x9Bb\\x7F');
  });

  it('says so when the script has no thresholds and no metrics were collected', () => {
    const r = makeResult();
    r.thresholds = [];
    r.metrics = {};
    r.rootGroup.checks = [];
    const out = renderTerminalReport(r, { color: false });
    expect(out).toContain('The script defines no thresholds.');
    expect(out).toContain('No metrics were collected.');
  });
});

describe("k6's way of writing values", () => {
  it.each([
    [0, '0s'],
    [0.0005, '500ns'],
    [0.49863, '498.63µs'],
    [3.0972, '3.09ms'],
    [1500, '1.5s'],
    [90_000, '1m30s'],
    [3_725_000, '1h2m5s'],
  ])('duration %f ms is %s', (ms, text) => expect(humanizeDuration(ms)).toBe(text));

  it.each([
    [0, '0 B'],
    [8900, '8.9 kB'],
    [591_000, '591 kB'],
    [10_500, '11 kB'],
    [2_500_000_000, '2.5 GB'],
  ])('%d bytes are %s', (bytes, text) => expect(humanizeBytes(bytes)).toBe(text));

  it('truncates rates, writes counters per second, trend counts plain, and honours summaryTimeUnit', () => {
    expect(humanizeValue(0.666666, { type: 'rate', contains: 'default' })).toBe('66.66%');
    expect(humanizeStat('rate', 1321.7142321, { type: 'counter', contains: 'default' })).toBe(
      '1321.714232/s',
    );
    expect(humanizeStat('count', 20, { type: 'trend', contains: 'time' })).toBe('20');
    expect(humanizeValue(1234.5678, { type: 'trend', contains: 'time' }, 's')).toBe('1.23s');
    expect(humanizeValue(visibleWidth('✓'), { type: 'gauge', contains: 'default' })).toBe('1');
  });
});

describe('wantsColor', () => {
  it.each([
    [true, {}, true],
    [undefined, {}, false],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: '' }, true],
    [undefined, { FORCE_COLOR: '1' }, true],
    [undefined, { FORCE_COLOR: '0' }, false],
    [true, { FORCE_COLOR: 'false' }, false],
    [undefined, { FORCE_COLOR: '1', NO_COLOR: '1' }, false],
  ] as const)('stdout a terminal: %s, env %o -> %s', (isTTY, env, expected) => {
    expect(wantsColor(isTTY, env as NodeJS.ProcessEnv)).toBe(expected);
  });
});
