import { describe, expect, it } from 'vitest';
import { mentionsHandleSummary, scriptReads } from '../../../src/k6/script-sources.ts';

// declaredContains is tested with the preflight helpers (test/unit/run/plan.test.ts).

describe("what the script's sources say", () => {
  it.each([
    ['const id = __VU;', { vu: true, vuIterations: false }],
    ['exec.vu.idInInstance', { vu: true, vuIterations: false }],
    ['exec.vu.idInTest', { vu: false, vuIterations: false }],
    ['if (__ITER === 0) {}', { vu: false, vuIterations: true }],
    ['exec.vu.iterationInScenario', { vu: false, vuIterations: true }],
    ['exec.scenario.iterationInTest', { vu: false, vuIterations: false }],
    ['__VUS __ITERATIONS', { vu: false, vuIterations: false }],
    ['__VU + __ITER', { vu: true, vuIterations: true }],
  ])('%s reads %j', (source, expected) => {
    expect(scriptReads(source)).toEqual(expected);
  });

  it('finds handleSummary as a whole word only', () => {
    expect(mentionsHandleSummary('export function handleSummary(data) {}')).toBe(true);
    expect(mentionsHandleSummary('const myhandleSummary = 1; handleSummaryTimeout')).toBe(false);
  });
});
