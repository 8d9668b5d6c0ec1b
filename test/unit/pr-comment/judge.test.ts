import { describe, expect, it } from 'vitest';
import { judgedOutcome } from '../../../src/actions/report/outcome.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../../src/compare/judgement.ts';
import { commentMarker, renderReportBodies } from '../../../src/pr-comment/comment.ts';
import { type CommentData, judge } from '../../../src/pr-comment/judge.ts';
import type { RunResult } from '../../../src/result/schema.ts';
import { makeResult } from '../../support/results.ts';

const saturated = {
  saturated: true,
  reasons: ['runner 1 dropped 112 of 1,000 iterations (11.2%)'],
};

function input(head: RunResult, base: RunResult): CommentData {
  return {
    head,
    base,
    baseline: {
      source: 'artifact',
      state: 'found',
      branch: 'main',
      artifactName: 'k6-distributed-baseline-default',
      run: { id: 501, url: 'https://github.com/o/r/actions/runs/501', sha: 'aaaaaaa111111' },
      mergeBase: 'aaaaaaa111111',
      atMergeBase: true,
      runsChecked: 1,
    },
    options: { key: 'default', gate: DEFAULT_GATE, tolerances: DEFAULT_TOLERANCES },
    links: {},
  };
}

describe('the verdict of a saturated run', () => {
  it('is inconclusive, not regressed, for a saturated head even with a +50% p95, and does not fail', () => {
    // The same +50% p95 regresses when the load generator kept up.
    expect(judge(input(makeResult({ p95: 33 }), makeResult())).verdict).toBe('regressed');
    const data = input({ ...makeResult({ p95: 33 }), loadGenerator: saturated }, makeResult());
    const rendered = renderReportBodies(data, commentMarker({ workflow: 'w', job: 'j', key: 'default' }));
    expect(rendered.judgement.verdict).toBe('inconclusive');
    expect(rendered.judgement.comparison?.gatedRegressions).toEqual([]);
    const lines = rendered.comment.text.split('\n');
    expect(lines[3]).toMatch(
      /^\*\*🟠 Inconclusive: the load generator saturated\*\* against `main`: this run saturated its runners.*more VUs/,
    );
    expect(lines[5]).toContain('The load generator saturated: runner 1 dropped 112 of 1,000 iterations');
    const outcome = judgedOutcome('comment', { failOnRegression: true }, data, rendered);
    expect(outcome.failure).toBeUndefined();
    expect(outcome.outputs.verdict).toBe('inconclusive');
    expect(outcome.warnings.join('\n')).toContain('runner 1 dropped 112');
  });

  it('is inconclusive, not "no regression", when only the baseline saturated', () => {
    const data = input(makeResult(), { ...makeResult(), loadGenerator: saturated });
    const rendered = renderReportBodies(data, '');
    expect(rendered.judgement.verdict).toBe('inconclusive');
    expect(rendered.comment.text).toContain(': the baseline saturated its runners');
    expect(rendered.comment.text).not.toContain('⚠️');
  });
});
