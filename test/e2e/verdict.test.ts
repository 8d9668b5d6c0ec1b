import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATE, DEFAULT_TOLERANCES, type MetricId } from '../../src/compare/judgement.ts';
import type { CommentData } from '../../src/compare/verdict.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { commentMarker, renderReportBodies } from '../../src/pr-comment/comment.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { uncertaintySchema } from '../../src/result/uncertainty-schema.ts';
import { ROOT, runCli, tempDir, writeScript } from '../support/cli.ts';

// The three-way PR verdict on real runs: the real CLI, 2 real k6 runners each, a real HTTP target
// on 127.0.0.1 whose service time is set per run (`/slow?ms=N`). Three runs: a baseline and a head
// of the same system, and a head twice as slow. Each result carries its own in-run intervals, and
// the comment shows them and the verdict, its level and its reason on its first line.

/** Where the rendered comments are kept for a person to look at (git-ignored). */
const OUTPUT = path.join(ROOT, 'test', '.output', 'verdict');

const SCRIPT = `
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: {
    api: { executor: 'constant-arrival-rate', rate: 200, timeUnit: '1s', duration: '5s', preAllocatedVUs: 20, maxVUs: 60 },
  },
};
export default function () {
  check(http.get(__ENV.BASE_URL + '/slow?ms=' + __ENV.SERVICE_MS), { 'status is 200': (r) => r.status === 200 });
}
`;

let target: RecordingTarget;
const runs: Record<'base' | 'same' | 'slow', RunResult> = {} as never;

/**
 * One real run; repeated (at most 3 times) while its load generator saturated: on a busy shared
 * machine a runner can use 90% of a core, and a saturated run is judged inconclusive by design
 * (test/unit/compare/significance.test.ts), which is not what this file tests.
 */
async function realRun(serviceMs: number): Promise<RunResult> {
  let result = await oneRun(serviceMs);
  for (let attempt = 1; attempt < 3 && result.loadGenerator?.saturated; attempt++)
    result = await oneRun(serviceMs);
  expect(result.loadGenerator?.reasons ?? []).toEqual([]);
  return result;
}

async function oneRun(serviceMs: number): Promise<RunResult> {
  const cli = await runCli(
    [
      'run',
      writeScript(SCRIPT),
      '--runners',
      '2',
      '--',
      '-e',
      `BASE_URL=${target.url}`,
      '-e',
      `SERVICE_MS=${serviceMs}`,
    ],
    { cwd: tempDir('k6d-verdict-') },
  );
  expect(cli.result, cli.stderr).toBeDefined();
  return cli.result!;
}

beforeAll(async () => {
  target = await startNodeTarget();
  // One after the other, as a base branch and a pull request would run.
  runs.base = await realRun(20);
  runs.same = await realRun(20);
  runs.slow = await realRun(40);
  mkdirSync(OUTPUT, { recursive: true });
});
afterAll(async () => {
  await target?.stop();
});

function data(head: RunResult, base: RunResult, gate: MetricId[] = DEFAULT_GATE): CommentData {
  return {
    head,
    base,
    baseline: {
      source: 'artifact',
      state: 'found',
      branch: 'main',
      run: { id: 501, sha: 'a'.repeat(40), url: 'https://github.com/o/r/actions/runs/501' },
    },
    options: { key: 'default', gate, tolerances: DEFAULT_TOLERANCES },
    links: {},
  };
}

const MARKER = commentMarker({ workflow: 'perf', job: 'load-test', key: 'default' });

/** The verdict line: the one under the marker and the heading. */
const verdictLine = (text: string) => text.split('\n')[3]!;

describe('the three-way verdict of real runs', () => {
  it('keeps each run’s own intervals in its result', () => {
    for (const r of Object.values(runs)) {
      const u = uncertaintySchema.parse(r.uncertainty);
      expect(u.level).toBe(0.95);
      const p95 = u.latency['http_req_duration{expected_response:true}']!.p95!;
      expect(p95.value).toBe(r.metrics['http_req_duration{expected_response:true}']!.values['p(95)']);
      expect(p95.low).toBeLessThanOrEqual(p95.value);
      expect(p95.high).toBeGreaterThan(p95.value);
      expect(p95.samples).toBe(r.metrics['http_req_duration{expected_response:true}']!.values.count);
      expect(u.rps!.low).toBeLessThan(u.rps!.value);
    }
  });

  // Gates chosen for what each case shows, so that the machine's own noise (a busy shared machine
  // moves a p95 by 10-20% and a p99 by 30% between runs: docs/how-it-works.md) cannot flip them:
  // p50 of a 20 ms service time moves 0.5%, and an error rate of 0 in 1,000 requests stays 0.
  it('regressed: a head twice as slow, with the level, the interval and the tolerance on the first line', () => {
    const { judgement, comment } = renderReportBodies(data(runs.slow, runs.base, ['p50', 'p95']), MARKER);
    writeFileSync(path.join(OUTPUT, 'regressed.md'), comment.text);
    expect(judgement.verdict).toBe('regressed');
    expect(judgement.comparison!.gatedRegressions.map((d) => d.id)).toContain('p50');
    expect(verdictLine(comment.text)).toMatch(
      /^\*\*🔴 Regressed\*\* against `main` at 99% confidence: .*Latency p50 \+[\d.]+ms \(\+\d+\.\d%\), interval \+[\d.]+ms … \+[\d.]+ms \(tolerance [\d.]+ms\)/,
    );
    // Each side with its own interval, e.g. "20.62ms ± 63µs".
    expect(comment.text).toMatch(
      /\| Latency p50 \(gate\) \| [\d.]+ms (± [\d.]+(ms|µs)|−[\d.]+(ms|µs)\/\+[\d.]+(ms|µs)) \| [\d.]+ms (± |−)[^|]+\| \+[\d.]+ms \(\+\d+\.\d%\) \| [^|]+ \| 🔴 regressed \|/,
    );
    expect(comment.text).toContain(
      '- Latency p50: in-run 95% intervals of both runs + between-run noise ±2.0% (default floor, no history)',
    );
  });

  it('inconclusive: the same system, about 1,000 requests with no error, gated on the error rate; says what would settle it', () => {
    const { judgement, comment } = renderReportBodies(data(runs.same, runs.base, ['error-rate']), MARKER);
    writeFileSync(path.join(OUTPUT, 'inconclusive.md'), comment.text);
    // No error in n requests bounds the rate at about 3/n only (the rule of three): 0.3% here,
    // more than the 0.1 pp tolerance allows.
    expect(runs.same.metrics.http_req_failed!.values.passes).toBe(0);
    expect(judgement.verdict).toBe('inconclusive');
    expect(judgement.inconclusiveBecause).toBe('uncertain');
    expect(verdictLine(comment.text)).toMatch(
      /^\*\*🟠 Inconclusive\*\* against `main` at 95% confidence: Error rate ±0\.00 pp, interval −[\d.]+ pp … \+[\d.]+ pp \(tolerance 0\.10 pp\): could be within or beyond the tolerance\. Settle it with about [\d.]+× the requests per side \(a longer run or more runners\), or A\/B rounds\.$/,
    );
    // The same pair with the default gate: never "no regression" (the error rate is still open).
    expect(renderReportBodies(data(runs.same, runs.base), MARKER).judgement.verdict).not.toBe('passed');
  });

  it('no regression: the same system judged on its p50', () => {
    const { judgement, comment } = renderReportBodies(data(runs.same, runs.base, ['p50']), MARKER);
    writeFileSync(path.join(OUTPUT, 'no-regression.md'), comment.text);
    const p50 = judgement.comparison!.keyMetrics.find((d) => d.id === 'p50')!;
    expect(p50.judgement!.verdict, JSON.stringify(p50.judgement)).toMatch(/^(no-regression|improved)$/);
    expect(judgement.verdict).toBe('passed');
    expect(verdictLine(comment.text)).toMatch(
      /^\*\*🟢 No regression\*\* against `main` at 95% confidence: every gated metric's change is shown to lie within its tolerance/,
    );
    expect(comment.text).toMatch(
      /\| Latency p50 \(gate\) \| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| ⚪ no regression \|/,
    );
  });
});
