import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../src/compare/judgement.ts';
import type { CommentData } from '../../src/compare/verdict.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import type { K6LiveMetric } from '../../src/k6/rest.ts';
import { RUN_TAG, RUNNER_TAG } from '../../src/plan.ts';
import { commentMarker, renderReportBodies } from '../../src/pr-comment/comment.ts';
import type { RunResult } from '../../src/result/schema.ts';
import type { Timeline } from '../../src/result/timeline-schema.ts';
import { TimelineRecorder } from '../../src/result/timeseries.ts';
import { ROOT, runCli, tempDir, writeScript } from '../support/cli.ts';

// A real local run (the real CLI, 2 real k6 runners, a real HTTP target on 127.0.0.1), then the
// pull request comment rendered from its result with a base-branch history from fixtures: the
// history is the real result with its latency scaled per run, as ten runs on main would differ.

/** Where the rendered comment is kept for a person to look at (git-ignored). */
const OUTPUT = path.join(ROOT, 'test', '.output', 'pr-report');

const SCRIPT = `
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: {
    // 20 VUs a runner for about 3 busy at a time: a stall of the shared machine finds VUs ready
    // instead of dropping iterations while k6 makes more (which marks the run saturated).
    api: { executor: 'constant-arrival-rate', rate: 250, timeUnit: '1s', duration: '4s', preAllocatedVUs: 40, maxVUs: 60 },
  },
  thresholds: { http_req_duration: ['p(95)<500'], http_req_failed: ['rate<0.1'] },
};
export default function () {
  // A 20 ms answer: a tail that is not many times the p95, as a sub-ms answer's is on a busy machine.
  check(http.get(__ENV.BASE_URL + '/slow?ms=20'), { 'status is 200': (r) => r.status === 200 });
}
`;

let target: RecordingTarget;
let run: { result: RunResult; cwd: string };
beforeAll(async () => {
  target = await startNodeTarget();
  // Repeated (at most 3 times) while its load generator saturated (a busy shared machine can drop
  // iterations): a saturated head is judged inconclusive by design, which is not what this tests.
  for (let attempt = 0; attempt < 3 && (!run || run.result.loadGenerator?.saturated); attempt++) {
    const cwd = tempDir('k6d-pr-report-');
    const cli = await runCli(
      [
        'run',
        writeScript(SCRIPT),
        '--runners',
        '2',
        '--',
        '-e',
        `BASE_URL=${target.url}`,
        '--out',
        'json=raw-{runner}.json',
      ],
      { cwd },
    );
    expect(cli.result, cli.stderr).toBeDefined();
    run = { result: cli.result!, cwd };
  }
  expect(run.result.loadGenerator?.reasons ?? []).toEqual([]);
  mkdirSync(OUTPUT, { recursive: true });
});
afterAll(async () => {
  await target?.stop();
});

interface RawPoint {
  type: string;
  metric: string;
  data: { time: string; value: number; tags?: Record<string, string> };
}

function rawSamples(cwd: string, runner: number): RawPoint[] {
  return readFileSync(path.join(cwd, `raw-${runner}.json`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RawPoint)
    .filter((p) => p.type === 'Point');
}

/**
 * The run over time as the orchestrator records it, replayed from each runner's raw samples
 * (`--out json`): at every 1 s slot, each runner's counts and p95 since the start, in the shape of
 * `/v1/metrics`. Used when the result's own `timeline` has too few points to draw (or none: a
 * result written before the orchestrator recorded one).
 */
function timelineFromRaw(result: RunResult, cwd: string): Timeline {
  const startedAtMs = Date.parse(result.startedAt);
  const samples = result.runners.map((r) => rawSamples(cwd, r.index));
  const recorder = new TimelineRecorder({ intervalS: 1, startedAtMs });
  const pollAt = (atMs: number) =>
    samples.map((points, runner) => {
      const upTo = points.filter((p) => Date.parse(p.data.time) <= atMs);
      const durations = upTo
        .filter((p) => p.metric === 'http_req_duration')
        .map((p) => p.data.value)
        .sort((a, b) => a - b);
      const failed = upTo.filter((p) => p.metric === 'http_req_failed' && p.data.value === 1).length;
      const vus = upTo.filter((p) => p.metric === 'vus').at(-1)?.data.value ?? 0;
      const metric = (name: string, sample: Record<string, number>): K6LiveMetric => ({
        name,
        type: 'counter',
        contains: 'default',
        sample,
      });
      const avg = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : 0;
      const p95 = durations.length ? durations[Math.ceil(0.95 * durations.length) - 1]! : 0;
      return {
        runner,
        metrics: [
          metric('http_reqs', { count: durations.length }),
          metric('http_req_failed', { passes: failed }),
          metric('http_req_duration', { avg, 'p(95)': p95 }),
          metric('vus', { value: vus }),
        ],
      };
    });
  const endMs = Date.parse(result.endedAt);
  for (let t = startedAtMs + 1000; t < endMs; t += 1000) recorder.record(t, pollAt(t));
  return recorder.finish(endMs, pollAt(endMs));
}

/** Ten base-branch runs: the real result with latency scaled by a known noise (±5%) per run. */
const NOISE = [1.0, 0.97, 1.03, 0.99, 1.05, 0.96, 1.01, 1.02, 0.98, 1.0];

function scaledLatency(result: RunResult, factor: number): RunResult {
  const copy = structuredClone(result);
  delete copy.timeline;
  for (const m of Object.values(copy.metrics))
    if (m.contains === 'time') for (const k of Object.keys(m.values)) m.values[k]! *= factor;
  return copy;
}

function commentData(head: RunResult, history: RunResult[]): CommentData {
  const runs = history.map((result, i) => ({
    run: { id: 500 + i, sha: (i + 10).toString(16).repeat(40).slice(0, 40) },
    result,
  }));
  const last = runs.at(-1)!;
  return {
    head,
    base: last.result,
    baseline: {
      source: 'artifact',
      state: 'found',
      branch: 'main',
      artifactName: 'k6-distributed-baseline-default',
      run: { id: last.run.id, sha: last.run.sha, url: 'https://github.com/o/r/actions/runs/509' },
      atMergeBase: true,
    },
    history: { runs, requested: 12, skipped: 2 },
    options: {
      key: 'default',
      gate: DEFAULT_GATE,
      tolerances: DEFAULT_TOLERANCES,
      dashboardUrl: 'https://grafana.example.com/d/k6?orgId=1',
    },
    links: { runUrl: 'https://github.com/o/r/actions/runs/9000', headSha: 'c0ffee'.padEnd(40, '0') },
  };
}

const MARKER = commentMarker({ workflow: 'perf', job: 'load-test', key: 'default' });

describe('the pull request comment of a real local run, with a history from fixtures', () => {
  it('tags every sample with the run id and the runner, and writes the HTML report next to the result', () => {
    const { result, cwd } = run;
    expect(result.runId).toMatch(/^r[0-9a-z]+$/);
    for (const r of result.runners) {
      const reqs = rawSamples(cwd, r.index).filter((p) => p.metric === 'http_reqs');
      expect(reqs.length).toBeGreaterThan(0);
      for (const p of reqs) {
        expect(p.data.tags?.[RUN_TAG]).toBe(result.runId);
        expect(p.data.tags?.[RUNNER_TAG]).toBe(String(r.index));
      }
    }
    const html = readFileSync(path.join(cwd, 'k6-distributed-result.html'), 'utf8');
    expect(html).toContain('<span class="verdict passed">PASSED</span>');
    expect(html).toContain('<h2>Runners</h2>');
  });

  it('shows the time chart of this run and the trend of every gated metric, with the history as the between-run noise', () => {
    const real = run.result;
    // The orchestrator's own series when it has at least two points to draw (its interval may be
    // longer than this 4 s test), else the same series replayed from the runners' raw samples.
    const recorded = real.timeline && real.timeline.points.length >= 2 ? real.timeline : undefined;
    const head: RunResult = { ...real, timeline: recorded ?? timelineFromRaw(real, run.cwd) };
    expect(head.timeline!.points.reduce((a, p) => a + p.requests, 0)).toBe(
      real.metrics.http_reqs!.values.count,
    );
    const history = NOISE.map((f) => scaledLatency(real, f));
    const { comment, judgement } = renderReportBodies(commentData(head, history), MARKER);
    writeFileSync(path.join(OUTPUT, 'comment.md'), comment.text);

    // The baseline is the same run (factor 1.0): nothing regressed. But a run of about 1,000
    // requests with no error cannot show the error rate within its 0.1 pp tolerance.
    expect(judgement.verdict).toBe('inconclusive');
    expect(judgement.inconclusiveBecause).toBe('uncertain');
    expect(judgement.comparison!.keyMetrics.find((d) => d.id === 'error-rate')!.judgement!.verdict).toBe(
      'inconclusive',
    );
    expect(comment.dropped).toEqual([]);
    // The run over time: the RPS chart, and the latency per interval (a local run's
    // `timeline.latency`), or the since-start p95 of a series replayed from the raw samples.
    expect(comment.text).toContain('<details open><summary>This run over time</summary>');
    expect(comment.text).toMatch(/```mermaid\n[^`]*xychart-beta\n {2}title "Requests per second/);
    expect(comment.text).toMatch(
      head.timeline!.latency
        ? /title "Latency per [\d.]+ s \(ms\): (highest )?p95 \(upper line\) and p50/
        : /title "p95 latency since start \(ms\)/,
    );
    // The trend: ten base runs by short SHA, this PR last, the normal range as flat lines.
    expect(comment.text).toContain('Trend of the gated metrics over the last 10 successful runs of `main`');
    expect(comment.text).toContain('2 runs skipped: result artifact missing or expired.');
    expect(comment.text).toMatch(
      /title "Latency p95 \(ms\) over the last 10 base runs, last point this PR, flat lines: normal range"/,
    );
    expect(comment.text).toContain('"aaaaaaa", "bbbbbbb"');
    // Each trend line says what its percentage is against, and what the verdict judged.
    expect(comment.text).toMatch(
      /\*\*Latency p95\*\* [+±−]\d+\.\d% against the history's median [\d.]+(ms|µs|s); against the baseline run [^:]+: (⚪ no regression|🟠 inconclusive)/,
    );
    // The noise model of each metric: both runs' own intervals and the history's spread.
    expect(comment.text).toMatch(
      /- Latency p95: in-run 95% intervals of both runs \+ between-run noise ±\d+\.\d% \(spread of 10 base-branch runs\)/,
    );
    // The dashboard link, narrowed to the run.
    const from = Date.parse(head.startedAt);
    expect(comment.text).toContain(`from=${from}&to=${Date.parse(head.endedAt)}&var-k6d_run=${head.runId}`);
  });

  it('regresses when the latency moves far beyond the spread of the history, with the level and the interval', () => {
    const real = run.result;
    const history = NOISE.map((f) => scaledLatency(real, f));
    // Four times slower, plus 2 ms so that the 1 ms floor is passed even on a very fast target: far
    // beyond the in-run interval of a p95 from about 1,000 requests, even with the lopsided tail a
    // busy machine gives it.
    const slow = scaledLatency(real, 4);
    const p95 = slow.metrics['http_req_duration{expected_response:true}'] ?? slow.metrics.http_req_duration!;
    p95.values['p(95)']! += 2;
    const { judgement, comment } = renderReportBodies(commentData(slow, history), MARKER);
    writeFileSync(path.join(OUTPUT, 'comment-regressed.md'), comment.text);
    expect(judgement.verdict).toBe('regressed');
    const gated = judgement.comparison!.gatedRegressions.map((d) => d.id);
    // p95 or p99 (or both): on a target answering in about 1 ms a busy machine can make one of
    // them so lopsided from 1,000 requests that 4× is not yet significant at 99%.
    expect(gated.filter((id) => id === 'p95' || id === 'p99')).not.toEqual([]);
    expect(comment.text).toMatch(
      /\*\*🔴 Regressed\*\* against `main` at 99% confidence: .*Latency p(95|99) \+[\d.]+ms \(\+\d+\.\d%\), interval \+/,
    );
  });
});
