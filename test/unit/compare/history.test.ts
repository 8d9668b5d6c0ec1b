import { describe, expect, it } from 'vitest';
import { compareResults } from '../../../src/compare/compare.ts';
import { applyHistory } from '../../../src/compare/history.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../../src/compare/judgement.ts';
import { type CommentData, judge } from '../../../src/compare/verdict.ts';
import { renderSections } from '../../../src/pr-comment/sections.ts';
import type { RunResult } from '../../../src/result/schema.ts';
import { makeResult } from '../../support/results.ts';

const options = { tolerances: DEFAULT_TOLERANCES, gate: DEFAULT_GATE };
/** Ten base-branch runs whose p95 wanders 36–46 ms: a noisy shared runner. */
const NOISY_P95 = [41, 36, 46, 40, 44, 37, 42, 45, 38, 41];
const noisy = NOISY_P95.map((p95) => makeResult({ p95 }));

function data(head: RunResult, base: RunResult, history: RunResult[]): CommentData {
  return {
    head,
    base,
    baseline: {
      source: 'artifact',
      state: 'found',
      branch: 'main',
      run: { id: 109, sha: '9'.repeat(40), url: 'https://github.com/o/r/actions/runs/109' },
    },
    history: {
      runs: history.map((result, i) => ({ run: { id: 100 + i, sha: `${i}`.repeat(40) }, result })),
      requested: 10,
      skipped: 0,
    },
    options: { key: 'default', ...options },
    links: {},
  };
}

describe('the noise gate in the comparison', () => {
  it('does not count a change that the fixed rule calls a regression when the history says it is normal', () => {
    // The baseline run happened to be the fastest; head at 45 ms is +25% on it, but normal on main.
    const base = makeResult({ p95: 36 });
    const head = makeResult({ p95: 45 });
    const fixed = compareResults(base, head, options);
    expect(fixed.gatedRegressions.map((d) => d.id)).toEqual(['p95']);
    const judged = applyHistory(fixed, noisy);
    const p95 = judged.keyMetrics.find((d) => d.id === 'p95')!;
    expect(p95.change).toBe('unchanged');
    expect(p95.noise).toMatchObject({ method: 'history', regressed: false, outsideRange: false });
    expect(judged.gatedRegressions).toEqual([]);
    // The table still shows the delta against the baseline run, and says why it does not count.
    expect(p95.base).toBe(36);
    const sections = renderSections(data(head, base, noisy), judge(data(head, base, noisy)), '');
    expect(sections.find((s) => s.id === 'key-metrics')!.text).toContain(
      "| Latency p95 (gate) | 36.00ms | 45.00ms | +9.00ms (+25.0%) | ⚪ within the history's normal range |",
    );
  });

  it('counts a change outside the normal range and beyond the floors, and names the method in the verdict', () => {
    const base = makeResult({ p95: 41 });
    const head = makeResult({ p95: 60 });
    const input = data(head, base, noisy);
    const j = judge(input);
    expect(j.verdict).toBe('regressed');
    expect(j.comparison!.gatedRegressions.map((d) => d.id)).toEqual(['p95']);
    const header = renderSections(input, j, '')[0]!.text;
    expect(header).toContain(
      '**🔴 Performance regressed** against `main`: Latency p95 +46.3% (history: median 41.00ms, normal range 27.66ms–54.34ms over 10 runs).',
    );
  });

  it('keeps the fixed rule below the minimum history, and leaves out runs from another environment', () => {
    const base = makeResult({ p95: 36 });
    const head = makeResult({ p95: 45 });
    const elsewhere = NOISY_P95.slice(0, 7).map((p95) => makeResult({ p95, environment: { runners: 8 } }));
    const input = data(head, base, [...elsewhere, ...noisy.slice(0, 3)]);
    const j = judge(input);
    expect(j.historyExcluded).toBe(7);
    expect(j.history).toHaveLength(3);
    expect(j.verdict).toBe('regressed');
    expect(j.comparison!.keyMetrics.find((d) => d.id === 'p95')!.noise).toBeUndefined();
    const trend = renderSections(input, j, '').find((s) => s.id === 'trend')!.text;
    expect(trend).toContain(
      "With 3 comparable runs (5 needed for the history's normal range) the gate compares with the baseline run and its tolerances.",
    );
    expect(trend).toContain('7 runs left out: another environment (runners, image, script…).');
  });

  it('judges RPS on its good side: only a drop below the range counts', () => {
    const history = [400, 390, 410, 405, 395, 400].map((rps) => makeResult({ rps }));
    const base = makeResult({ rps: 400 });
    const up = applyHistory(compareResults(base, makeResult({ rps: 520 }), options), history);
    expect(up.keyMetrics.find((d) => d.id === 'rps')!.change).toBe('better');
    const down = applyHistory(compareResults(base, makeResult({ rps: 300 }), options), history);
    expect(down.gatedRegressions.map((d) => d.id)).toEqual(['rps']);
  });
});
