import { describe, expect, it } from 'vitest';
import type { MetricDelta } from '../../../src/compare/compare.ts';
import { changeCell, formatChange } from '../../../src/render/delta.ts';

/** A key metric's delta with only what the change cell reads. */
function delta(change: MetricDelta['change'], extra: Partial<MetricDelta> = {}): MetricDelta {
  return { change, gated: false, ...extra } as MetricDelta;
}

describe('the change cell, decided once for the Markdown and the HTML report', () => {
  it.each([
    // [what, delta, judged, words, tone, Markdown cell]
    ['better', delta('better'), true, 'better', 'better', '🟢 better'],
    ['unchanged', delta('unchanged'), true, 'within tolerance', 'neutral', '⚪ within tolerance'],
    [
      'worse than the baseline, within the history',
      delta('unchanged', { noise: {} as MetricDelta['noise'], baselineChange: 'worse' }),
      true,
      "within the history's normal range",
      'neutral',
      "⚪ within the history's normal range",
    ],
    [
      'worse than the baseline without a noise verdict',
      delta('unchanged', { baselineChange: 'worse' }),
      true,
      'within tolerance',
      'neutral',
      '⚪ within tolerance',
    ],
    ['missing', delta('missing'), true, '—', 'missing', '—'],
    ['worse and gated', delta('worse', { gated: true }), true, 'worse', 'worse', '🔴 worse'],
    ['worse, not gated', delta('worse'), true, 'worse (not gated)', 'warn', '🟠 worse (not gated)'],
    [
      'worse, not judged',
      delta('worse', { gated: true }),
      false,
      'worse (not judged)',
      'warn',
      '🟠 worse (not judged)',
    ],
  ])('%s: %s', (_what, d, judged, words, tone, markdown) => {
    expect(changeCell(d, judged)).toEqual({ words, tone });
    expect(formatChange(d, judged)).toBe(markdown);
  });
});
