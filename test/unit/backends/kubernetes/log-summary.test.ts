import { describe, expect, it } from 'vitest';
import { extractSummary } from '../../../../src/backends/kubernetes/log-summary.ts';
import { COMPACT_SUMMARY_FORMAT } from '../../../../src/k6/summary.ts';

describe('runner log', () => {
  // As k6 writes the export to its stdout: indented JSON, no newline at the end.
  const exported = JSON.stringify({ metrics: { iterations: { count: 3 } } }, null, 4);

  it('gives the summary k6 wrote to stdout, even with k6 log lines (from stderr) between its lines', () => {
    const lines = exported.split('\n');
    const log = [
      'time="2026-11-21T09:00:00Z" level=info msg="hi" source=console',
      '  █ TOTAL RESULTS',
      '    iterations...: 3',
      ...lines.slice(0, 3),
      'time="2026-11-21T09:00:01Z" level=warning msg="from stderr, arrived late"',
      ...lines.slice(3),
    ].join('\n');
    const { summary, rest } = extractSummary(log);
    expect(JSON.parse(summary!)).toEqual({ metrics: { iterations: { count: 3 } } });
    expect(rest).toBe(
      [
        'time="2026-11-21T09:00:00Z" level=info msg="hi" source=console',
        '  █ TOTAL RESULTS',
        '    iterations...: 3',
        'time="2026-11-21T09:00:01Z" level=warning msg="from stderr, arrived late"',
      ].join('\n'),
    );
  });

  it('tells a whole compact summary from a cut-off one and from the export alone', () => {
    const compact = [
      '{',
      ` "format": "${COMPACT_SUMMARY_FORMAT}",`,
      ' "stats": [],',
      ' "metrics": {',
      '  "iterations": {"type":"counter","values":{"count":3}}',
      ' },',
      ' "root_group": {},',
      ' "trends": [',
      ' ]',
      '}',
    ];
    const format = (log: string) => extractSummary(log).format;
    expect(format(['level=info msg=x', ...compact, exported].join('\n'))).toBe('compact');
    expect(format(['level=info msg=x', ...compact.slice(0, -1)].join('\n'))).toBeUndefined();
    expect(format(exported)).toBe('export');
  });

  it('gives no summary when it is missing or cut off', () => {
    expect(extractSummary('no summary here')).toEqual({ rest: 'no summary here' });
    expect(extractSummary(exported.split('\n').slice(0, -2).join('\n')).summary).toBeUndefined();
    expect(extractSummary('{\n    "other": 1\n}').summary).toBeUndefined();
  });
});
