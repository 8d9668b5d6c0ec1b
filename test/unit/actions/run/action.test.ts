import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../../../src/errors.ts';
import { tempDir } from '../../../support/temp.ts';
import { waitFor } from '../../../support/wait.ts';
import { harness } from './support/harness.ts';

/*
 * The run action's logic (src/actions/run/action.ts) with fake deps: what a user sees of a step
 * (its outputs, job summary, failure line and kinds, and the post step's state) for a pass, a
 * crossed threshold, a configuration error and a cancelled workflow. The same paths run through
 * dist/run.js with real k6 in test/e2e/run-action-*.test.ts.
 */

describe('runAction with one script', () => {
  it('passes: every output, one `results` entry, the report as job summary, no failure', async () => {
    const h = harness({ script: 'load.js', runners: '3' }, { 'load.js': { runners: [{}, {}, {}] } });
    const outcome = await h.run();
    const resultPath = path.join(h.dir, 'result.json');
    const runId = h.runs[0]!.runId!;
    expect(runId).toMatch(/^[a-z0-9]+$/);
    expect(outcome.outputs).toEqual({
      verdict: 'passed',
      'thresholds-ok': 'true',
      'result-path': resultPath,
      'html-report': path.join(h.dir, 'result.html'),
      'run-id': runId,
      rps: '30',
      p95: '0',
      p99: '0',
      'error-rate': '0',
      'start-skew': '0',
      'ab-verdict': '',
      results: JSON.stringify([{ script: 'load.js', verdict: 'passed', 'result-path': resultPath }]),
      'junit-path': '',
    });
    expect(existsSync(outcome.outputs['html-report']!)).toBe(true);
    expect(outcome.failure).toBeUndefined();
    expect(outcome.jobSummary?.required).toBe(true);
    expect(outcome.jobSummary?.markdown).toContain('✅ passed');
    expect(outcome.ran?.runs.map((r) => [r.script, r.result?.verdict])).toEqual([['load.js', 'passed']]);
    expect(outcome.ran?.cancelled).toBe(false);
    // backend local saves no run id: the post step has nothing to remove.
    expect(h.state).toEqual([['cleaned', 'true']]);
    expect(h.backends.get('load.js')?.cleanups).toBe(1);
  });

  it('writes the JUnit report to junit-path and names it in the output; a threshold crossed is a failed case', async () => {
    const junit = path.join(tempDir('k6d-junit-out-'), 'k6.xml');
    const h = harness(
      { script: 'load.js', runners: '2', 'junit-path': junit },
      { 'load.js': { runners: [{}, {}], thresholds: { http_reqs: ['count<150'] } } },
    );
    const outcome = await h.run();
    expect(outcome.outputs['junit-path']).toBe(junit);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testsuite name="thresholds" tests="1" failures="1"/);
    expect(xml).toContain('<failure message="count=200, limit count&lt;150" type="threshold">');
  });

  it('fails on a crossed threshold with one line, kind thresholds (exit 99), and still every output', async () => {
    const h = harness(
      { script: 'load.js', runners: '2' },
      { 'load.js': { runners: [{}, {}], thresholds: { http_reqs: ['count<150'] } } },
    );
    const outcome = await h.run();
    expect(outcome.outputs.verdict).toBe('failed');
    expect(outcome.outputs['thresholds-ok']).toBe('false');
    expect(JSON.parse(outcome.outputs.results!)).toEqual([
      {
        script: 'load.js',
        verdict: 'failed',
        'result-path': path.join(h.dir, 'result.json'),
        failure: 'thresholds crossed on the aggregate: http_reqs count<150',
      },
    ]);
    expect(outcome.failure).toEqual({
      message: 'k6 distributed run failed: thresholds crossed on the aggregate: http_reqs count<150',
      kinds: ['thresholds'],
    });
    expect(exitCodeFor(outcome.failure!.kinds)).toBe(99);
    expect(outcome.jobSummary?.markdown).toContain('count<150');
  });

  it('turns off the job summary when the root action says so', async () => {
    const h = harness({ script: 'load.js', 'job-summary': 'true' }, { 'load.js': { runners: [{}] } });
    h.deps.jobSummary = false;
    const outcome = await h.run();
    expect(outcome.jobSummary).toBeUndefined();
    expect(outcome.ran?.summary).toContain('✅ passed');
  });
});

describe('runAction on a configuration error', () => {
  it('fails with the one line naming the input, no output and no run', async () => {
    const h = harness(
      { script: 'load.js', 'secret-env': 'API_TOKEN=api/token' },
      { 'load.js': { runners: [{}] } },
    );
    const outcome = await h.run();
    expect(outcome.failure?.message).toMatch(
      /^secret-env: API_TOKEN names the Kubernetes Secret api\/token,/,
    );
    expect(outcome.failure?.message).not.toContain('\n');
    expect(outcome.failure?.kinds).toEqual(['configuration']);
    expect(outcome.failure?.stack).toBeUndefined();
    expect(exitCodeFor(outcome.failure!.kinds)).toBe(2);
    expect(outcome.outputs).toEqual({});
    expect(outcome.jobSummary).toBeUndefined();
    expect(outcome.ran).toBeUndefined();
    expect(h.runs).toEqual([]);
    expect(h.state).toEqual([['cleaned', 'true']]);
  });

  it('reads a secret-env variable from the step environment with backend local', async () => {
    const h = harness(
      { script: 'load.js', env: 'MODE=smoke', 'secret-env': 'API_TOKEN=api/token' },
      { 'load.js': { runners: [{}] } },
      { API_TOKEN: 's3cr3t' },
    );
    const outcome = await h.run();
    expect(outcome.failure).toBeUndefined();
    expect(h.localEnvs).toEqual([{ MODE: 'smoke', API_TOKEN: 's3cr3t' }]);
  });

  it('names a script pattern that matches no file', async () => {
    const outcome = await harness({ script: 'tests/*.js' }, {}).run();
    expect(outcome.failure).toEqual({
      message: 'script: "tests/*.js" matches no file',
      kinds: ['configuration'],
    });
  });

  it('warns once of the Pod-only inputs backend local ignores', async () => {
    const h = harness(
      { script: 'load.js', namespace: 'perf', 'node-selector': 'pool=load' },
      { 'load.js': { runners: [{}] } },
    );
    await h.run();
    expect(h.log.lines.filter((l) => l.startsWith('warning:'))).toEqual([
      'warning: node-selector, namespace: apply to Kubernetes runner Pods only; ignored with backend local',
    ]);
  });
});

describe('runAction on a cancelled workflow', () => {
  it('stops the runners and fails with kind interrupted, with the partial result as outputs', async () => {
    const h = harness(
      { script: 'load.js', runners: '2' },
      { 'load.js': { runners: [{ run: 'hang' }, { run: 'hang' }] } },
    );
    const running = h.run();
    await waitFor(
      () => h.backends.get('load.js')?.runners.every((r) => r.calls.start === 1) ?? false,
      'the start',
    );
    h.cancel();
    const outcome = await running;
    expect(outcome.ran?.cancelled).toBe(true);
    expect(outcome.outputs.verdict).toBe('failed');
    expect(outcome.failure?.kinds).toContain('interrupted');
    expect(exitCodeFor(outcome.failure!.kinds)).toBe(130);
    expect(outcome.failure?.message).toMatch(/^k6 distributed run failed: /);
    expect(h.backends.get('load.js')?.runners.every((r) => r.calls.stop === 1)).toBe(true);
  });

  it('before the start: fails with the interruption as `k6 distributed run failed: …` and no output', async () => {
    const h = harness({ script: 'load.js' }, { 'load.js': { runners: [{ onReady: () => h.cancel() }] } });
    const outcome = await h.run();
    expect(outcome.failure?.kinds).toEqual(['interrupted']);
    expect(outcome.failure?.message).toMatch(/^k6 distributed run failed: /);
    expect(outcome.outputs).toEqual({});
    expect(outcome.ran).toBeUndefined();
  });
});

describe('runAction with several scripts', () => {
  it('runs each with its own run id and result; one that fails fails the step, naming it', async () => {
    const h = harness(
      { script: 'a.js\nb.js' },
      { 'a.js': { runners: [{}] }, 'b.js': { runners: [{}], thresholds: { http_reqs: ['count<50'] } } },
    );
    const outcome = await h.run();
    expect(h.runs.map((r) => r.script)).toEqual(['a.js', 'b.js']);
    expect(new Set(h.runs.map((r) => r.runId)).size).toBe(2);
    expect(outcome.outputs.verdict).toBe('failed');
    expect(outcome.outputs['thresholds-ok']).toBe('false');
    expect(outcome.outputs.rps).toBeUndefined();
    expect(JSON.parse(outcome.outputs.results!)).toEqual([
      { script: 'a.js', verdict: 'passed', 'result-path': path.join(h.dir, 'result-a.js.json') },
      {
        script: 'b.js',
        verdict: 'failed',
        'result-path': path.join(h.dir, 'result-b.js.json'),
        failure: 'thresholds crossed on the aggregate: http_reqs count<50',
      },
    ]);
    expect(outcome.failure).toEqual({
      message:
        'k6 distributed run failed: 1 of 2 scripts: b.js (thresholds crossed on the aggregate: http_reqs count<50)',
      kinds: ['thresholds'],
    });
    expect(outcome.jobSummary?.required).toBe(false);
    expect(outcome.jobSummary?.markdown).toMatch(/^# k6 distributed: 2 scripts\n\n## `a.js`/);
  });

  it('one after another: a cancelled workflow stops the first, and the next does not start', async () => {
    const h = harness(
      { script: 'a.js\nb.js' },
      { 'a.js': { runners: [{ run: 'hang' }] }, 'b.js': { runners: [{}] } },
    );
    const running = h.run();
    await waitFor(() => h.backends.get('a.js')?.runners[0]?.calls.start === 1, 'the start');
    h.cancel();
    const outcome = await running;
    expect(h.runs.map((r) => r.script)).toEqual(['a.js']);
    expect(outcome.failure).toEqual({
      message:
        'k6 distributed run interrupted: the workflow was cancelled; 1 of 2 scripts started, every runner stopped',
      kinds: ['interrupted'],
    });
    expect(outcome.outputs.verdict).toBe('failed');
    expect(JSON.parse(outcome.outputs.results!)).toHaveLength(1);
    expect(outcome.ran?.cancelled).toBe(true);
  });
});

describe('runAction with backend kubernetes', () => {
  it('saves every run id, the namespace and the cleanup policy for the post step before each run', async () => {
    const h = harness(
      { script: 'a.js\nb.js', backend: 'kubernetes', cleanup: 'on-success' },
      { 'a.js': { runners: [{}] }, 'b.js': { runners: [{}] } },
    );
    await h.run();
    const [a, b] = h.runs.map((r) => r.runId);
    expect(h.state).toEqual([
      ['runId', `${a}`],
      ['namespace', 'load'],
      ['cleanup', 'on-success'],
      ['runId', `${a},${b}`],
      ['namespace', 'load'],
      ['cleanup', 'on-success'],
      ['cleaned', 'true'],
    ]);
  });
});
