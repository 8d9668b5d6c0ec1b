import { describe, expect, it } from 'vitest';
import { compareResults } from '../../../src/compare/compare.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../../src/compare/judgement.ts';
import { applySignificance } from '../../../src/compare/significance.ts';
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

describe('the history in the three-way verdict: its spread is the between-run noise', () => {
  it('does not call a change a regression when the history shows the machine moves that much: inconclusive, settled by A/B rounds', () => {
    // The baseline run happened to be the fastest; head at 45 ms is +25% on it, but within what
    // main's runs wander (1.4826 × MAD = 4.45 ms, about 11%).
    const base = makeResult({ p95: 36 });
    const head = makeResult({ p95: 45 });
    const fixed = compareResults(base, head, options);
    expect(fixed.gatedRegressions.map((d) => d.id)).toEqual(['p95']);
    const judged = applySignificance(fixed, head, base, noisy);
    const p95 = judged.keyMetrics.find((d) => d.id === 'p95')!;
    expect(p95.judgement).toMatchObject({ verdict: 'inconclusive', noise: { source: 'history' } });
    expect(p95.judgement!.noise.betweenRunSd).toBeCloseTo(1.4826 * 3, 6);
    expect(p95.judgement!.settle).toMatch(/^A\/B rounds/);
    expect(p95.change).toBe('unchanged');
    expect(judged.gatedRegressions).toEqual([]);
    const j = judge(data(head, base, noisy));
    expect(j.verdict).toBe('inconclusive');
    expect(j.inconclusiveBecause).toBe('uncertain');
    // The table shows the delta against the baseline run and judges that same number.
    const sections = renderSections(data(head, base, noisy), j, '');
    expect(sections.find((s) => s.id === 'key-metrics')!.text).toMatch(
      /\| Latency p95 \(gate\) \| 36\.00ms \| 45\.00ms \| \+9\.00ms \(\+25\.0%\) \| [^|]+ \| 🟠 inconclusive \|/,
    );
    expect(sections.find((s) => s.id === 'key-metrics')!.text).toContain(
      '- Latency p95: no in-run interval (older results) + between-run noise ±12.4% (spread of 10 base-branch runs)',
    );
    // The trend says against what it computes its percentage, and what the verdict judged.
    expect(sections.find((s) => s.id === 'trend')!.text).toContain(
      "**Latency p95** +9.8% against the history's median 41.00ms; against the baseline run +9.00ms (+25.0%): 🟠 inconclusive",
    );
  });

  it('counts a change well beyond the history spread, and names the level and the interval in the verdict', () => {
    const base = makeResult({ p95: 41 });
    const head = makeResult({ p95: 60 });
    const input = data(head, base, noisy);
    const j = judge(input);
    expect(j.verdict).toBe('regressed');
    expect(j.comparison!.gatedRegressions.map((d) => d.id)).toEqual(['p95']);
    const header = renderSections(input, j, '')[0]!.text;
    expect(header).toMatch(
      /\*\*🔴 Regressed\*\* against `main` at 99% confidence: Latency p95 \+19\.00ms \(\+46\.3%\), interval \+\d+\.\d+ms … \+\d+\.\d+ms \(tolerance 4\.10ms\)/,
    );
  });

  it('uses the default between-run noise below the minimum history, and leaves out runs from another environment', () => {
    const base = makeResult({ p95: 36 });
    const head = makeResult({ p95: 45 });
    const elsewhere = NOISY_P95.slice(0, 7).map((p95) => makeResult({ p95, environment: { runners: 8 } }));
    const input = data(head, base, [...elsewhere, ...noisy.slice(0, 3)]);
    const j = judge(input);
    expect(j.historyExcluded).toBe(7);
    expect(j.history).toHaveLength(3);
    expect(j.verdict).toBe('regressed');
    const p95 = j.comparison!.keyMetrics.find((d) => d.id === 'p95')!;
    expect(p95.judgement!.noise.source).toBe('default');
    expect(p95.judgement!.noise.betweenRunSd).toBeCloseTo(0.02 * 36, 9);
    const trend = renderSections(input, j, '').find((s) => s.id === 'trend')!.text;
    expect(trend).toContain(
      'With 3 comparable runs (5 needed to measure the between-run noise) the verdict uses the default between-run noise.',
    );
    expect(trend).toContain('7 runs left out: another environment (runners, image, script…).');
  });

  it('judges RPS on its good side: only a drop counts', () => {
    const history = [400, 390, 410, 405, 395, 400].map((rps) => makeResult({ rps }));
    const base = makeResult({ rps: 400 });
    const upHead = makeResult({ rps: 520 });
    const up = applySignificance(compareResults(base, upHead, options), upHead, base, history);
    expect(up.keyMetrics.find((d) => d.id === 'rps')!.change).toBe('better');
    const downHead = makeResult({ rps: 300 });
    const down = applySignificance(compareResults(base, downHead, options), downHead, base, history);
    expect(down.gatedRegressions.map((d) => d.id)).toEqual(['rps']);
  });
});
