import { describe, expect, it } from 'vitest';
import { parseRunnerSummary } from '../../../src/k6/summary.ts';
import { mergePercentiles } from '../../../src/result/quantiles.ts';

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
});
