import { describe, expect, it } from 'vitest';
import { judgedOutcome } from '../../../src/actions/report/outcome.ts';
import type { BaselineInfo } from '../../../src/compare/baseline.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../../src/compare/judgement.ts';
import { type CommentData, judge } from '../../../src/compare/verdict.ts';
import { commentMarker, renderReportBodies } from '../../../src/pr-comment/comment.ts';
import { COMMENT_LIMIT, fitSections, measureChars } from '../../../src/pr-comment/fit.ts';
import { renderSections } from '../../../src/pr-comment/sections.ts';
import type { RunResult } from '../../../src/result/schema.ts';
import { makeResult } from '../../support/results.ts';

const found: BaselineInfo = {
  source: 'artifact',
  state: 'found',
  branch: 'main',
  artifactName: 'k6-distributed-baseline-default',
  run: { id: 501, url: 'https://github.com/o/r/actions/runs/501', sha: 'aaaaaaa111111' },
  mergeBase: 'aaaaaaa111111',
  atMergeBase: true,
  runsChecked: 1,
};

function input(head: RunResult, base: RunResult | undefined, baseline: BaselineInfo = found): CommentData {
  return {
    head,
    ...(base ? { base } : {}),
    baseline,
    options: { key: 'default', gate: DEFAULT_GATE, tolerances: DEFAULT_TOLERANCES },
    links: {
      runUrl: 'https://github.com/o/r/actions/runs/9000',
      headSha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
    },
  };
}

const marker = commentMarker({ workflow: 'perf', job: 'load-test', key: 'default' });

/** Cells per table row, counting only pipes that are not escaped. */
function cellCounts(markdown: string): number[] {
  return markdown
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) => l.split(/(?<!\\)\|/).length - 2);
}

describe('the comment', () => {
  it('puts the verdict and the key metric deltas first, with direction-aware signs', () => {
    const body = renderReportBodies(input(makeResult({ p95: 35, rps: 420 }), makeResult()), marker).comment
      .text;
    const lines = body.split('\n');
    expect(lines[0]).toBe(marker);
    expect(lines[1]).toBe('### k6 load test');
    // The verdict, its level and its reason on the first line under the heading.
    expect(lines[3]).toBe(
      '**🔴 Regressed** against `main` at 99% confidence: Latency p95 +13.00ms (+59.1%), interval +11.98ms … +14.02ms (tolerance 2.20ms): beyond the tolerance and not explained by the noise.',
    );
    // These fixtures carry no in-run interval (older results): the default between-run noise
    // (2% for p95: sd of Δ = √2 × 0.44 ms, one-sided 95% bounds ± 1.645 × 0.62 ms) judges alone.
    expect(body).toContain(
      '| Latency p95 (gate) | 22.00ms | 35.00ms | +13.00ms (+59.1%) | +11.98ms … +14.02ms (tolerance 2.20ms) | 🔴 regressed |',
    );
    expect(body).toContain(
      '| Requests per second (gate) | 400.0/s | 420.0/s | +20.0/s (+5.0%) | +10.7/s … +29.3/s (tolerance 40.0/s) | ⚪ no regression |',
    );
    expect(body).toContain(
      '| Latency p90 | 18.00ms | 18.00ms | ±0ms (±0.0%) | −837µs … +837µs (tolerance 1.80ms) | ⚪ no regression |',
    );
    // Rates carry their counts: Wilson's interval of 60 failures in 60,000 requests.
    expect(body).toContain(
      '| Error rate (gate) | 0.10% ± 0.03 pp | 0.10% ± 0.03 pp | ±0.00 pp (±0.0%) | −0.04 pp … +0.04 pp (tolerance 0.10 pp) | ⚪ no regression |',
    );
    expect(body).toContain(
      '- Latency p95: no in-run interval (older results) + between-run noise ±2.0% (default floor, no history)',
    );
    expect(body).toContain(
      '**Baseline:** [run 501](https://github.com/o/r/actions/runs/501) on `main` at `aaaaaaa`, the merge-base of this pull request.',
    );
    expect(body).toContain('[workflow run](https://github.com/o/r/actions/runs/9000)');
  });

  it('shows the thresholds verdict of the run apart from the regression verdict', () => {
    const body = renderReportBodies(input(makeResult({ verdict: 'failed' }), makeResult()), marker).comment
      .text;
    expect(body).toContain('**🟢 No regression** against `main` at 95% confidence');
    expect(body).toContain('**This run (its own thresholds):** **❌ failed** · `examples/quickstart.js`');
    expect(body).toContain('#### Thresholds of this run (judged on the aggregate of all runners)');
    expect(body).toContain('| `http_req_duration` | `p(95)<500` | 22.00ms | ❌ fail |');
    expect(body).toContain('<details><summary>Why this run failed</summary>');
  });

  it('puts per-runner and per-scenario detail in <details>', () => {
    const head = makeResult();
    const base = makeResult();
    for (const r of [head, base])
      r.metrics['http_req_duration{scenario:browse}'] = {
        type: 'trend',
        contains: 'time',
        values: { 'p(95)': 30 },
      };
    const body = renderReportBodies(input(head, base), marker).comment.text;
    expect(body).toContain('<details><summary>Per scenario and tag (1 submetric, not gated)</summary>');
    expect(body).toContain('| `http_req_duration{scenario:browse}` p(95) | 30.00ms | 30.00ms |');
    expect(body).toContain('<details><summary>Runners: 2 (baseline: 2), start skew 1.70ms</summary>');
    expect(body).toContain('<details><summary>Checks</summary>');
  });

  it('says "no baseline yet" and "baseline expired" as states, with the head metrics', () => {
    const none = renderReportBodies(
      input(makeResult(), undefined, {
        source: 'artifact',
        state: 'none',
        branch: 'main',
        artifactName: 'k6-distributed-baseline-default',
        runsChecked: 3,
      }),
      marker,
    );
    expect(none.judgement.verdict).toBe('no-baseline');
    expect(none.comment.text).toContain('**⚪ No baseline yet** against `main`');
    expect(none.comment.text).toContain(
      'no successful run of this workflow on `main` has stored a result (artifact `k6-distributed-baseline-default`; 3 runs checked)',
    );
    expect(none.comment.text).toContain('| Metric | Global value |');
    const expired = renderReportBodies(
      input(makeResult(), undefined, { ...found, state: 'expired', expiredAt: '2026-01-02T00:00:00Z' }),
      marker,
    );
    expect(expired.judgement.verdict).toBe('baseline-expired');
    expect(expired.comment.text).toContain(
      '**Baseline expired:** the stored result of [run 501](https://github.com/o/r/actions/runs/501) on `main` at `aaaaaaa` expired on 2026\\-01\\-02',
    );
  });

  it('says when the environment differs and does not judge the deltas', () => {
    const r = renderReportBodies(
      input(makeResult({ p95: 80, environment: { runners: 4 } }), makeResult()),
      marker,
    );
    expect(r.judgement.verdict).toBe('environment-changed');
    expect(r.judgement.comparison!.gatedRegressions).toEqual([]);
    expect(r.comment.text).toContain('> [!WARNING]');
    expect(r.comment.text).toContain('> - runners: `2` → `4`');
    expect(r.comment.text).toContain(
      '| Latency p95 | 22.00ms | 80.00ms | +58.00ms (+263.6%) | +56.98ms … +59.02ms (tolerance 2.20ms) | 🟠 worse (not judged) |',
    );
  });

  it('still judges a run whose script changed (script-change: gate), and notes the change', () => {
    // Touching the load test must not switch the regression gate off (issue: scriptHash policy).
    const head = makeResult({ p95: 80, environment: { scriptHash: 'changed' } });
    const gated = renderReportBodies(input(head, makeResult()), marker);
    expect(gated.judgement.verdict).toBe('regressed');
    expect(gated.comment.text).toContain('> [!NOTE]');
    expect(gated.comment.text).toContain('> - scriptHash:');
    const ungated = input(head, makeResult());
    ungated.options.scriptChange = 'ungated';
    expect(renderReportBodies(ungated, marker).judgement.verdict).toBe('environment-changed');
    // Another change besides the script is still not judged.
    const both = makeResult({ p95: 80, environment: { scriptHash: 'changed', runners: 4 } });
    expect(renderReportBodies(input(both, makeResult()), marker).judgement.verdict).toBe(
      'environment-changed',
    );
  });

  it('keeps user-controlled names from breaking tables or injecting HTML', () => {
    const evil = '<img src=x onerror=alert(1)> | `x` **b** [l](http://e) \n# h';
    const head = makeResult();
    const base = makeResult();
    head.rootGroup.checks.push({ name: evil, path: `::${evil}`, passes: 1, fails: 1 });
    head.thresholds.push({
      metric: `http_req_duration{scenario:${evil}}`,
      expression: `p(95)<1 | ${evil}`,
      ok: false,
      abortOnFail: false,
    });
    head.failures.push(evil);
    head.script = evil;
    for (const r of [head, base])
      r.metrics[`http_req_duration{scenario:${evil}}`] = {
        type: 'trend',
        contains: 'time',
        values: { 'p(95)': 3 },
      };
    const body = renderReportBodies(
      { ...input(head, base), options: { ...input(head, base).options, title: evil } },
      marker,
    ).comment.text;
    // Inside a code span (backticks cannot close it: inlineCode replaces them) HTML is shown as text.
    const outsideCode = body.replace(/`[^`\n]*`/g, '');
    const tags = new Set([...outsideCode.matchAll(/<\/?([a-z!]+)/gi)].map((m) => m[1]));
    expect(tags).toEqual(new Set(['!', 'details', 'summary', 'sub']));
    expect(body).not.toMatch(/\n# h/);
    const tableRows = cellCounts(body);
    // Every row of every table has the cells of its header: 6 (key metrics), 5 (submetrics), 4
    // (thresholds, checks), 7 (runners).
    expect(new Set(tableRows)).toEqual(new Set([6, 5, 4, 7]));
    for (const line of body.split('\n').filter((l) => l.startsWith('|'))) {
      const n = line.split(/(?<!\\)\|/).length - 2;
      expect([4, 5, 6, 7]).toContain(n);
    }
  });

  it('marks the comment with workflow, job and key, percent-encoded so a name cannot end the marker', () => {
    expect(commentMarker({ workflow: 'perf tests', job: 'k6', key: 'api' })).toBe(
      '<!-- k6-distributed:report workflow=perf%20tests job=k6 key=api -->',
    );
    expect(commentMarker({ workflow: 'a-->b', job: 'j', key: 'k' })).not.toContain('a-->');
  });
});

/** A result with many runners, checks, thresholds and scenarios: far over the comment limit. */
function bigResult(): RunResult {
  const r = makeResult();
  r.runners = Array.from({ length: 400 }, (_, i) => ({
    ...r.runners[0]!,
    index: i,
    segment: `${i}/400:${i + 1}/400`,
  }));
  r.rootGroup.checks = Array.from({ length: 600 }, (_, i) => ({
    name: `response ${i} has the expected body`,
    path: `::response ${i} has the expected body`,
    passes: 100,
    fails: i % 7,
  }));
  r.thresholds = Array.from({ length: 300 }, (_, i) => ({
    metric: `http_req_duration{scenario:s${i}}`,
    expression: 'p(95)<250',
    ok: i % 50 !== 0,
    observed: 100 + i,
    abortOnFail: false,
  }));
  for (let i = 0; i < 300; i++)
    r.metrics[`http_req_duration{scenario:s${i}}`] = {
      type: 'trend',
      contains: 'time',
      values: { 'p(95)': 100 + i },
    };
  return r;
}

describe('fitting the 65,536-character limit', () => {
  it('drops detail first and keeps verdict, key metrics and thresholds whole', () => {
    const head = bigResult();
    const full = renderSections(input(head, bigResult()), judge(input(head, bigResult())), marker);
    const fullLength = full.map((s) => s.text).join('\n\n').length;
    const r = renderReportBodies(input(head, bigResult()), marker);
    console.log(
      `big result: full report ${fullLength} characters; comment ${r.comment.text.length} (left out: ${r.comment.dropped.join(', ')}); summary ${Buffer.byteLength(r.summary.text)} bytes (left out: ${r.summary.dropped.join(', ') || 'nothing'})`,
    );
    expect(fullLength).toBeGreaterThan(COMMENT_LIMIT);
    expect(r.comment.text.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(r.comment.dropped[0]).toBe('runners');
    expect(r.comment.text.startsWith(marker)).toBe(true);
    expect(r.comment.text).toContain('| Latency p95 (gate) |');
    expect(r.comment.text).toContain('`http_req_duration{scenario:s299}`'); // every threshold row kept
    expect(r.comment.text).toContain("Left out to fit GitHub's size limit: runners");
    expect(r.comment.text).toContain('[workflow run]'); // footer kept
    expect(r.summary.dropped).toEqual([]);
    expect(r.summary.text.length).toBe(fullLength + 1);
  });

  it('shortens the thresholds table last, failed thresholds first', () => {
    const head = makeResult();
    head.thresholds = Array.from({ length: 3000 }, (_, i) => ({
      metric: `http_req_duration{name:https://example.com/api/items/${i}}`,
      expression: 'p(95)<250',
      ok: i !== 2999,
      observed: 100,
      abortOnFail: false,
    }));
    const r = renderReportBodies(input(head, makeResult()), marker);
    expect(r.comment.text.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(r.comment.dropped).toContain('part of thresholds');
    const rows = r.comment.text.split('\n').filter((l) => l.startsWith('| `http_req_duration{name'));
    expect(rows[0]).toContain('items/2999'); // the failed one first
    expect(rows.length).toBeGreaterThan(100);
    expect(r.comment.text).toMatch(
      /_\d+ more thresholds not shown \(0 failed\); the job summary lists them all\._/,
    );
  });

  it('cuts as a last resort, never over the limit', () => {
    const fitted = fitSections([{ id: 'header', text: 'x'.repeat(100_000) }], 1000, measureChars, '');
    expect(fitted.text.length).toBeLessThanOrEqual(1000);
    expect(fitted.dropped).toEqual(['the rest']);
  });
});

/** A head or baseline whose load generator could not keep up (src/result/health.ts). */
const saturated = {
  saturated: true,
  reasons: ['runner 1 dropped 112 of 1,000 iterations (11.2%)'],
};

describe('the verdict of a saturated run', () => {
  it('is inconclusive, not regressed, for a saturated head even with a +50% p95, and does not fail', () => {
    // The same +50% p95 regresses when the load generator kept up.
    expect(judge(input(makeResult({ p95: 33 }), makeResult())).verdict).toBe('regressed');
    const data = input({ ...makeResult({ p95: 33 }), loadGenerator: saturated }, makeResult());
    const rendered = renderReportBodies(data, marker);
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
    const rendered = renderReportBodies(data, marker);
    expect(rendered.judgement.verdict).toBe('inconclusive');
    expect(rendered.comment.text).toContain(': the baseline saturated its runners');
    expect(rendered.comment.text).not.toContain('⚠️');
  });
});
