import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderTrendPage } from '../../src/render/html/trend-page.ts';
import { historyEntry } from '../../src/result/history-entry.ts';
import { makeResult } from '../support/results.ts';
import { tempDir } from '../support/temp.ts';
import { ensureChromium, openInChromium } from './support/chromium.ts';

// The history branch's trend page opened in real headless Chromium: every chart drawn, from the
// inlined Chart.js alone (the page is a local file; nothing is fetched).

describe('the trend page in Chromium', () => {
  it('draws RPS and the latency percentiles (with the p95 band) of every key', () => {
    const entries = ['api', 'web'].flatMap((key) =>
      [1, 2, 3, 4, 5, 6].map((i) => {
        const result = makeResult(
          { p95: 20 + (i % 3), rps: 400 + i * 5 },
          { startedAt: new Date(Date.UTC(2026, 0, i)).toISOString() },
        );
        result.metrics['http_req_duration{expected_response:true}']!.percentileBands = {
          'p(95)': [19 + (i % 3), 21 + (i % 3)],
        };
        return historyEntry(result, {
          key,
          branch: 'main',
          sha: `${i}`.repeat(40),
          repository: 'octo/app',
          workflowRunId: 100 + i,
          runAttempt: 1,
          storedAt: '2026-02-01T00:00:00.000Z',
        });
      }),
    );
    const dir = tempDir('k6d-trend-page-');
    const file = path.join(dir, 'index.html');
    writeFileSync(
      file,
      renderTrendPage(entries, {
        serverUrl: 'https://github.com',
        repository: 'octo/app',
        historyBranch: 'perf-history',
      }),
    );
    const { dom } = openInChromium(ensureChromium(), file, path.join(dir, 'index.png'));
    const body = /<body([^>]*)>/.exec(dom)![1]!;
    expect(body).not.toContain('data-chart-error');
    expect(body).toContain('data-charts="4"');
    expect(body).toContain('data-painted="4"');
  });
});
