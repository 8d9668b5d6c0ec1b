import { describe, expect, it } from 'vitest';
import { renderTrendPage } from '../../../../src/render/html/trend-page.ts';
import { type HistoryEntry, historyEntry } from '../../../../src/result/history-entry.ts';
import { makeResult } from '../../../support/results.ts';

// The trend page's text without a browser.

function entry(id: number, p95: number, branch = 'main'): HistoryEntry {
  const result = makeResult(
    { p95, rps: 400 + id },
    { startedAt: new Date(Date.UTC(2026, 0, id)).toISOString() },
  );
  result.metrics['http_req_duration{expected_response:true}']!.percentileBands = {
    'p(95)': [p95 - 1, p95 + 1],
  };
  return historyEntry(result, {
    key: 'api',
    branch,
    sha: `${id}`.padStart(40, 'c'),
    repository: 'octo/app',
    workflowRunId: 700 + id,
    runAttempt: 1,
    storedAt: '2026-02-01T00:00:00.000Z',
  });
}

const OPTIONS = { serverUrl: 'https://github.com', repository: 'octo/app', historyBranch: 'perf-history' };

describe('the trend page', () => {
  it('lists every run with its figures, bands and links, and embeds the chart data oldest first', () => {
    const page = renderTrendPage([entry(3, 30), entry(1, 20), entry(2, 25)], OPTIONS);
    expect(page).toContain('3 runs kept in the branch <code>perf-history</code>');
    expect([...page.matchAll(/<tr data-run="(\d+)">/g)].map((m) => m[1])).toEqual(['703', '702', '701']);
    expect(page).toContain('25.00ms (24.00ms–26.00ms)');
    expect(page).toContain('<a href="https://github.com/octo/app/actions/runs/702">702</a>');
    expect(page).toContain(`https://github.com/octo/app/commit/${'2'.padStart(40, 'c')}`);
    const data = JSON.parse(
      /<script type="application\/json" id="k6d-trend">(.*?)<\/script>/s.exec(page)![1]!,
    );
    expect(data.series).toHaveLength(1);
    expect(data.series[0].latencyMetric).toBe('http_req_duration{expected_response:true}');
    expect(
      data.series[0].points.map((p: { run: number; latency: Record<string, number> }) => [
        p.run,
        p.latency['p(95)'],
      ]),
    ).toEqual([
      [701, 20],
      [702, 25],
      [703, 30],
    ]);
    expect(data.series[0].points[0].bands).toEqual({ 'p(95)': [19, 21] });
    // Self-contained: no external script or style.
    expect(page).not.toMatch(/<script[^>]+src=|<link /);
  });

  it('escapes what the branch holds: a branch name cannot end the script or add markup', () => {
    const page = renderTrendPage([entry(1, 20, 'x</script><img src=x onerror=alert(1)>')], OPTIONS);
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('on x&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(page.match(/<\/script>/g)).toHaveLength(3);
  });

  it('says so when there is no run', () => {
    expect(renderTrendPage([], OPTIONS)).toContain('<p>No runs yet.</p>');
  });
});
