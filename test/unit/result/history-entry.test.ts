import { describe, expect, it } from 'vitest';
import { keyMetricValue } from '../../../src/compare/compare.ts';
import { METRIC_IDS } from '../../../src/compare/judgement.ts';
import {
  entryAsResult,
  entryFileName,
  historyEntry,
  historyEntrySchema,
} from '../../../src/result/history-entry.ts';
import { parseRunResult } from '../../../src/result/read-result.ts';
import { makeResult } from '../../support/results.ts';
import { simulatedResult } from '../../support/samples.ts';

const ORIGIN = {
  key: 'api',
  branch: 'main',
  sha: 'a'.repeat(40),
  repository: 'octo/app',
  workflowRunId: 501,
  runAttempt: 2,
  storedAt: '2026-01-10T08:01:00.000Z',
};

function fullResult() {
  const result = makeResult({ p95: 31 });
  result.metrics.http_req_duration!.percentileBands = { 'p(95)': [29, 33], 'p(99.9)': [80, 90] };
  result.runners[0]!.logTail = 'ERRO[0001] token=hunter2';
  return result;
}

describe('a history entry', () => {
  it('keeps the key figures and their bands, and none of the log tails, runners or thresholds', () => {
    const entry = historyEntry(fullResult(), ORIGIN);
    expect(historyEntrySchema.parse(entry)).toEqual(entry);
    expect(Object.keys(entry.metrics).sort()).toEqual([
      'checks',
      'http_req_duration',
      'http_req_duration{expected_response:true}',
      'http_req_failed',
      'http_reqs',
    ]);
    expect(entry.metrics.http_req_duration).toEqual({
      type: 'trend',
      contains: 'time',
      values: {
        count: 60000,
        avg: 11,
        min: 1,
        max: 120,
        med: 10,
        'p(50)': 10,
        'p(90)': 18,
        'p(95)': 31,
        'p(99)': 40,
      },
      percentileBands: { 'p(95)': [29, 33] },
    });
    const text = JSON.stringify(entry);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('p(95)<500');
    expect(text.length).toBeLessThan(2000);
  });

  it('reads back as a result the comparison reads exactly as the original', () => {
    const result = fullResult();
    const back = parseRunResult(structuredClone(entryAsResult(historyEntry(result, ORIGIN))), 'entry');
    expect(back.environment).toEqual(result.environment);
    for (const key of ['http_req_duration', 'http_req_duration{expected_response:true}'])
      for (const id of METRIC_IDS)
        expect(keyMetricValue(id, back, key), `${id} ${key}`).toBe(keyMetricValue(id, result, key));
  });

  it('is named by its start time, run id and attempt, so names sort oldest first', () => {
    const names = ['2026-01-10T09:00:00.500Z', '2026-01-10T08:59:59.000Z', '2025-12-31T23:00:00.000Z'].map(
      (startedAt) => entryFileName(historyEntry(makeResult({}, { startedAt }), ORIGIN)),
    );
    expect(names).toEqual([
      '2026-01-10T09-00-00Z-501-2.json',
      '2026-01-10T08-59-59Z-501-2.json',
      '2025-12-31T23-00-00Z-501-2.json',
    ]);
    expect([...names].sort()).toEqual([...names].reverse());
  });
});

describe('a history entry of a result with in-run intervals', () => {
  it('keeps them, and gives them back as the result the comparison reads', () => {
    const result = simulatedResult(21, { n: 2000, meanMs: 4 });
    const entry = historyEntry(result, {
      key: 'default',
      branch: 'main',
      sha: 'a'.repeat(40),
      repository: 'o/r',
      workflowRunId: 7,
      runAttempt: 1,
      storedAt: '2026-01-10T08:00:20.000Z',
    });
    expect(historyEntrySchema.parse(JSON.parse(JSON.stringify(entry))).uncertainty).toEqual(
      result.uncertainty,
    );
    expect(entryAsResult(entry).uncertainty).toEqual(result.uncertainty);
    expect(JSON.stringify(entry.uncertainty).length).toBeLessThan(4000);
  });
});
