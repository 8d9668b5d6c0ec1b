import { describe, expect, it } from 'vitest';
import { dashboardMarkdown, dashboardUrlFor, parseDashboardUrl } from '../../../src/render/dashboard.ts';
import { renderReport } from '../../../src/render/markdown.ts';
import type { RunResult } from '../../../src/result/schema.ts';
import { TIMELINE_SCHEMA } from '../../../src/result/timeline-schema.ts';
import { makeResult } from '../../support/results.ts';

const run = { startedAt: '2026-01-10T08:00:00.000Z', endedAt: '2026-01-10T08:00:15.000Z', runId: 'rk1x2y3' };
const FROM = Date.parse(run.startedAt);
const TO = Date.parse(run.endedAt);

describe('the dashboard link', () => {
  it('appends the time range and the run id to a plain URL, keeping its own query', () => {
    expect(dashboardUrlFor('https://grafana.example.com/d/k6?orgId=1', run)).toBe(
      `https://grafana.example.com/d/k6?orgId=1&from=${FROM}&to=${TO}&var-k6d_run=rk1x2y3`,
    );
  });

  it('fills placeholders instead, wherever they are', () => {
    expect(dashboardUrlFor('https://g.example.com/d/k6?var-testid={run}&from={from}&to={to}', run)).toBe(
      `https://g.example.com/d/k6?var-testid=rk1x2y3&from=${FROM}&to=${TO}`,
    );
  });

  it('is one Markdown line with the run and its time', () => {
    expect(dashboardMarkdown('https://g.example.com/d/k6', run)).toBe(
      `📈 [Dashboard of this run](https://g.example.com/d/k6?from=${FROM}&to=${TO}&var-k6d_run=rk1x2y3) (run \`rk1x2y3\`, 08:00:00–08:00:15 UTC)`,
    );
  });

  it('refuses what is not an http(s) URL, naming the input', () => {
    expect(parseDashboardUrl('  ')).toBeUndefined();
    expect(parseDashboardUrl(' https://g.example.com/d/k6?from={from} ')).toBe(
      'https://g.example.com/d/k6?from={from}',
    );
    expect(() => parseDashboardUrl('g.example.com')).toThrow(
      'dashboard-url: "g.example.com" is not a URL (e.g. https://grafana.example.com/d/k6)',
    );
    expect(() => parseDashboardUrl('file:///etc/passwd')).toThrow(
      'dashboard-url: "file:///etc/passwd" must start with https:// or http://',
    );
  });
});

describe('the job summary of a run', () => {
  const withTimeline = (): RunResult => ({
    ...makeResult(),
    ...run,
    timeline: {
      schema: TIMELINE_SCHEMA,
      intervalS: 5,
      latencyMetric: 'http_req_duration',
      p95Scope: 'since-start',
      points: [5, 10, 15].map((tS) => ({
        tS,
        intervalS: 5,
        requests: 2000,
        rps: 400,
        vus: 20,
        errorRate: 0,
        p95MinMs: 20 + tS / 5,
        p95MaxMs: 22 + tS / 5,
        runners: 2,
      })),
    },
  });

  it('draws the run over time and links the dashboard when asked', () => {
    const md = renderReport(withTimeline(), { charts: true, dashboardUrl: 'https://g.example.com/d/k6' });
    expect(md).toContain('### Over time');
    expect(md).toContain('  title "Requests per second (every 5 s)"');
    expect(md).toContain('  line [23, 24, 25]');
    expect(md).toContain('[Dashboard of this run](https://g.example.com/d/k6?from=');
  });

  it('leaves the charts out for a terminal, and for a result written before the timeline', () => {
    expect(renderReport(withTimeline())).not.toContain('```mermaid');
    expect(renderReport(makeResult(), { charts: true })).not.toContain('### Over time');
  });
});
