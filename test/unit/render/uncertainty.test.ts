import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../../src/render/html/report.ts';
import { renderReport } from '../../../src/render/markdown.ts';
import { renderTerminalReport } from '../../../src/render/terminal/report.ts';
import { formatWithInterval, headlineIntervals } from '../../../src/render/uncertainty.ts';
import { makeResult } from '../../support/results.ts';
import { simulatedResult } from '../../support/samples.ts';

const estimate = (value: number, low: number, high: number) => ({
  value,
  low,
  high,
  samples: 1000,
  designEffect: 1,
});

describe('a figure with its interval', () => {
  it('writes ± for a balanced interval and both sides for a lopsided one, in the figure’s unit', () => {
    expect(formatWithInterval(23.1, estimate(23.1, 22.5, 23.7), 'ms')).toBe('23.10ms ± 600µs');
    expect(formatWithInterval(40, estimate(40, 38.8, 43.5), 'ms')).toBe('40.00ms −1.20ms/+3.50ms');
    expect(formatWithInterval(0.001, estimate(0.001, 0.0006, 0.0014), 'pp')).toBe('0.10% ± 0.04 pp');
    expect(formatWithInterval(400, estimate(400, 390, 410), '/s')).toBe('400.0/s ± 10.0/s');
    // An interval estimated for the same run's figure in another unit of scale: relative for ms.
    expect(formatWithInterval(46.2, estimate(23.1, 22.5, 23.7), 'ms')).toBe('46.20ms ± 1.20ms');
    expect(formatWithInterval(23.1, undefined, 'ms')).toBe('23.10ms');
  });
});

describe('the reports show the in-run intervals', () => {
  const result = simulatedResult(11, { n: 6000, meanMs: 4 });

  it('in markdown, on the terminal and in HTML, with the level and the method', () => {
    const rows = headlineIntervals(result);
    expect(rows.map(([k]) => k)).toEqual([
      'Requests per second',
      'http_req_duration{expected_response:true} p50',
      'http_req_duration{expected_response:true} p90',
      'http_req_duration{expected_response:true} p95',
      'http_req_duration{expected_response:true} p99',
      'Error rate',
      'Checks passed',
    ]);
    const p95 = rows.find(([k]) => k.endsWith('p95'))![1];
    expect(p95).toMatch(/^\d+\.\d\dms (± |−)/);
    const md = renderReport(result);
    expect(md).toContain('### How sure these figures are');
    expect(md).toContain(`| http\\_req\\_duration\\{expected\\_response:true\\} p95 | ${p95} |`);
    expect(md).toMatch(/± is the 95% confidence interval estimated from this run itself \(order statistics/);
    const term = renderTerminalReport(result, { color: false });
    expect(term).toContain('HOW SURE (in-run confidence intervals)');
    expect(term).toMatch(
      new RegExp(`http_req_duration\\{expected_response:true\\} p95\\.+: ${p95.replace(/[.+]/g, '\\$&')}`),
    );
    const html = renderHtmlReport({ result });
    expect(html).toContain('<h3>How sure these figures are</h3>');
    expect(html).toContain(p95);
  });

  it('leave the section out for an older result without intervals', () => {
    const old = makeResult();
    expect(headlineIntervals(old)).toEqual([]);
    expect(renderReport(old)).not.toContain('How sure');
    expect(renderTerminalReport(old, { color: false })).not.toContain('HOW SURE');
  });
});
