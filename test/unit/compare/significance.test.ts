import { describe, expect, it } from 'vitest';
import type { BaselineInfo } from '../../../src/compare/baseline.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../../src/compare/judgement.ts';
import {
  DEFAULT_BETWEEN_RUN_NOISE,
  DEFAULT_VERDICT_MODEL,
  settleHint,
  type VerdictModel,
} from '../../../src/compare/significance.ts';
import { type CommentData, judge } from '../../../src/compare/verdict.ts';
import { renderReportBodies } from '../../../src/pr-comment/comment.ts';
import { renderSections } from '../../../src/pr-comment/sections.ts';
import type { RunResult } from '../../../src/result/schema.ts';
import { simulatedResult } from '../../support/samples.ts';

// The three-way verdict on results whose figures and in-run intervals come from seeded samples of
// a known latency (test/support/samples.ts): exponential, mean 4 ms × factor.

const found: BaselineInfo = {
  source: 'artifact',
  state: 'found',
  branch: 'main',
  run: { id: 501, url: 'https://github.com/o/r/actions/runs/501', sha: 'a'.repeat(40) },
};

function data(head: RunResult, base: RunResult, history?: RunResult[]): CommentData {
  return {
    head,
    base,
    baseline: found,
    ...(history
      ? {
          history: {
            runs: history.map((result, i) => ({ run: { id: 400 + i, sha: `${i}`.repeat(40) }, result })),
            requested: history.length,
            skipped: 0,
          },
        }
      : {}),
    options: { key: 'default', gate: DEFAULT_GATE, tolerances: DEFAULT_TOLERANCES },
    links: {},
  };
}

const run = (seed: number, n: number, factor = 1) => simulatedResult(seed, { n, meanMs: 4 * factor });

describe('the three-way verdict', () => {
  it('calls a +30% latency shift with big samples regressed, on p95 and p99', () => {
    const j = judge(data(run(2, 20_000, 1.3), run(1, 20_000)));
    expect(j.verdict).toBe('regressed');
    expect(j.comparison!.gatedRegressions.map((d) => d.id).sort()).toEqual(['p95', 'p99']);
    const p95 = j.comparison!.keyMetrics.find((d) => d.id === 'p95')!;
    expect(p95.judgement!.noise.inRun).toBe('both');
    expect(p95.judgement!.interval[0]).toBeGreaterThan(p95.judgement!.tolerance);
  });

  it('calls two runs of the same system no regression when both have big samples', () => {
    for (const [a, b] of [
      [1, 2],
      [3, 4],
      [5, 6],
    ]) {
      const j = judge(data(run(a!, 20_000), run(b!, 20_000)));
      expect(j.verdict, `seeds ${a}, ${b}`).toBe('passed');
      for (const d of j.comparison!.keyMetrics.filter((x) => x.gated))
        expect(d.judgement!.verdict, `${d.id}, seeds ${a}, ${b}`).toMatch(/^(no-regression|improved)$/);
    }
  });

  it('calls the same comparison inconclusive with a tiny sample, and says what would settle it', () => {
    const j = judge(data(run(8, 150), run(7, 150)));
    expect(j.verdict).toBe('inconclusive');
    expect(j.inconclusiveBecause).toBe('uncertain');
    const p99 = j.comparison!.keyMetrics.find((d) => d.id === 'p99')!;
    expect(p99.judgement!.verdict).toBe('inconclusive');
    expect(p99.judgement!.settle).toMatch(
      /× the requests per side \(a longer run or more runners\), or A\/B rounds$/,
    );
    // The comment's verdict line: verdict, level, the metric with its interval and tolerance, and the remedy.
    const { comment } = renderReportBodies(data(run(8, 150), run(7, 150)), '');
    const line = comment.text.split('\n')[2]!;
    expect(line).toMatch(
      /^\*\*🟠 Inconclusive\*\* against `main` at 95% confidence: .*Latency p99 .*interval .* \(tolerance .*\): could be within or beyond the tolerance\. Settle it with /,
    );
  });

  it('judges A/A pairs regressed in at most 2% of 100 seeded pairs of 6,000 requests (a 60 s run at 100/s)', () => {
    let regressed = 0;
    let inconclusive = 0;
    for (let i = 0; i < 100; i++) {
      const j = judge(data(run(1000 + 2 * i, 6000), run(1001 + 2 * i, 6000)));
      if (j.verdict === 'regressed') regressed++;
      if (j.verdict === 'inconclusive') inconclusive++;
    }
    console.log(
      `A/A, 6,000 requests per side, 100 pairs: ${regressed} regressed, ${inconclusive} inconclusive`,
    );
    expect(regressed).toBeLessThanOrEqual(2);
  });

  it('is inconclusive, never regressed, when a generator saturated, however large the change', () => {
    const head = {
      ...run(2, 20_000, 2),
      loadGenerator: { saturated: true, reasons: ['runner 0 dropped 5 of 100 iterations (5.0%)'] },
    };
    const j = judge(data(head, run(1, 20_000)));
    expect(j.verdict).toBe('inconclusive');
    expect(j.inconclusiveBecause).toBe('saturated');
    expect(j.comparison!.gatedRegressions).toEqual([]);
  });

  it("takes the between-run noise from the history's spread, less its runs' own in-run part", () => {
    // Ten base runs whose latency wanders ±8% run to run: wider than the default 2% floor.
    const factors = [1, 0.92, 1.08, 0.97, 1.05, 0.94, 1.02, 1.07, 0.95, 1.0];
    const history = factors.map((f, i) => run(50 + i, 20_000, f));
    const head = run(71, 20_000, 1.15);
    const base = run(70, 20_000);
    const without = judge(data(head, base));
    const withHistory = judge(data(head, base, history));
    const p95 = (j: typeof without) => j.comparison!.keyMetrics.find((d) => d.id === 'p95')!.judgement!;
    expect(p95(without).noise.source).toBe('default');
    expect(p95(without).noise.betweenRunSd).toBeCloseTo(
      DEFAULT_BETWEEN_RUN_NOISE.p95.relative * base.metrics.http_req_duration!.values['p(95)']!,
      9,
    );
    expect(p95(withHistory).noise.source).toBe('history');
    expect(p95(withHistory).noise.betweenRunSd).toBeGreaterThan(2 * p95(without).noise.betweenRunSd);
    expect(p95(withHistory).noise.text).toMatch(/\(spread of 10 base-branch runs\)$/);
    // +15% is a regression against the quiet default, not against a machine that moves ±8%.
    expect(p95(without).verdict).toBe('regressed');
    expect(p95(withHistory).verdict).toBe('inconclusive');
  });
});

describe('a tuned model (the calibration benchmark’s knob)', () => {
  it('judges with the floors and levels it is given, and the comment states those levels', () => {
    const head = run(71, 20_000, 1.15);
    const base = run(70, 20_000);
    expect(judge(data(head, base)).verdict).toBe('regressed');
    const noisy: VerdictModel = {
      ...DEFAULT_VERDICT_MODEL,
      regressionConfidence: 0.999,
      betweenRunNoise: {
        ...DEFAULT_BETWEEN_RUN_NOISE,
        p95: { relative: 0.08, absolute: 0 },
        p99: { relative: 0.08, absolute: 0 },
      },
    };
    const j = judge(data(head, base), noisy);
    expect(j.verdict).toBe('inconclusive');
    expect(j.levels).toEqual({ regressed: 0.999, noRegression: 0.95 });
    const footer = renderSections(data(head, base), j, '').at(-1)!.text;
    expect(footer).toContain('Levels: regressed at 99.9%, no regression at 95% (one-sided).');
  });
});

describe('what would settle an inconclusive metric', () => {
  it('asks for more requests when the in-run part is too wide, A/B rounds when the machine is', () => {
    // Room for the bad-side bound: (10 − 0) / 1.645 = 6.08; less 2τ² = 2: 34.96 left for the in-run
    // variance 36 → 36 / 34.96 = 1.03 → 1.1× the requests.
    expect(settleHint(0, 10, 6, 1, 1.645, 2.326)).toEqual({
      text: 'about 1.1× the requests per side (a longer run or more runners), or A/B rounds',
      factor: 1.1,
    });
    expect(settleHint(0, 10, 6, 6, 1.645, 2.326).text).toMatch(/^A\/B rounds/);
  });
});
