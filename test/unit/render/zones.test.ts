import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../../src/compare/judgement.ts';
import { judge } from '../../../src/compare/verdict.ts';
import { renderSections } from '../../../src/pr-comment/sections.ts';
import { renderHtmlReport } from '../../../src/render/html/report.ts';
import { renderReport } from '../../../src/render/markdown.ts';
import { renderTerminalReport } from '../../../src/render/terminal/report.ts';
import { renderZones } from '../../../src/render/zones.ts';
import type { ZoneResult } from '../../../src/result/zone-schema.ts';
import { makeResult } from '../../support/results.ts';

const zone = (name: string, share: number, runners: number[], p95: number): ZoneResult => ({
  name,
  share,
  runners,
  runnersOk: runners.length,
  startSkewMs: 3.2,
  startOffsetMs: name === 'eu' ? 0 : 4,
  requests: share * 10,
  rps: share / 10,
  iterations: share * 10,
  errorRate: 0.01,
  latencyMs: { avg: p95 / 2, med: p95 / 2, p90: p95 * 0.9, p95, p99: p95 * 1.5, max: p95 * 2 },
});

function zoned() {
  const result = makeResult();
  result.zones = [zone('eu', 70, [0], 40), { ...zone('us', 30, [1], 180), runnersOk: 0 }];
  result.runners = result.runners.slice(0, 2).map((r, i) => ({ ...r, zone: i === 0 ? 'eu' : 'us' }));
  return result;
}

describe('per-zone breakdown', () => {
  it('is a markdown table of each zone with its share, requests, RPS, errors and percentiles', () => {
    const table = renderZones(zoned());
    expect(table.split('\n')[0]).toBe(
      '| Zone | Share | Runners | Requests | RPS | Errors | p50 | p90 | p95 | p99 | Start skew |',
    );
    expect(table).toContain('| eu | 70% | 1 | 700 |');
    expect(table).toContain('| us | 30% | 0 of 1 ok | 300 |');
    const report = renderReport(zoned());
    expect(report).toContain('### Zones');
    // The runners say their zone.
    expect(report).toMatch(/\| Runner \| Zone \| Segment \|/);
  });

  it('appears in the HTML and terminal reports', () => {
    expect(renderHtmlReport({ result: zoned() })).toContain('<h2>Zones</h2>');
    const terminal = renderTerminalReport(zoned(), { color: false });
    expect(terminal).toContain('ZONES');
    expect(terminal).toMatch(/\n\s+us\s+30%\s+0 of 1 ok\s+300/);
  });

  it('appears in the PR comment, open under its own heading', () => {
    const comment = (head: ReturnType<typeof makeResult>) => {
      const data = {
        head,
        baseline: {
          source: 'artifact' as const,
          state: 'none' as const,
          branch: 'main',
          artifactName: 'a',
          runsChecked: 0,
        },
        options: { key: 'default', gate: DEFAULT_GATE, tolerances: DEFAULT_TOLERANCES },
        links: {},
      };
      return renderSections(data, judge(data), '')
        .map((s) => s.text)
        .join('\n');
    };
    const text = comment(zoned());
    expect(text).toContain('<details open><summary>Per load zone</summary>');
    expect(text).toContain('| us | 30% | 0 of 1 ok | 300 |');
    expect(comment(makeResult())).not.toContain('Per load zone');
  });

  it('is absent without zones', () => {
    const result = makeResult();
    expect(renderZones(result)).toBe('');
    expect(renderReport(result)).not.toContain('### Zones');
    expect(renderHtmlReport({ result })).not.toContain('<h2>Zones</h2>');
    expect(renderTerminalReport(result, { color: false })).not.toContain('ZONES');
  });
});
