import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptOutcome } from '../../src/actions/run/runner.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { runAction, startAction } from '../support/action.ts';
import { k6ProcessesUnder, tempDir } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';

// Several scripts in one step (issue #14 item 9): the committed bundles run the way GitHub runs
// them, real k6 with the local backend against a real target on 127.0.0.1.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

function script(threshold: string): string {
  return `
import http from 'k6/http';
export const options = { vus: 2, iterations: 20, thresholds: { http_reqs: ['${threshold}'] } };
export default function () { http.get(__ENV.TARGET + '/api/items'); }
`;
}

/** A workspace with load/api.js (passes) and load/checkout.js (crosses its threshold). */
function workspace(): string {
  const dir = tempDir('k6d-scripts-ws-');
  mkdirSync(path.join(dir, 'load'));
  writeFileSync(path.join(dir, 'load/api.js'), script('count>=20'));
  writeFileSync(path.join(dir, 'load/checkout.js'), script('count<5'));
  return dir;
}

describe.each(['dist/run.js', 'dist/main.js'])('%s with a glob of two scripts', (entry) => {
  it('runs both, one result file and verdict each, one summary with a section per script', async () => {
    const ws = workspace();
    const step = await runAction(
      entry,
      {
        script: 'load/*.js',
        runners: '2',
        backend: 'local',
        'k6-args': `-e TARGET=${target.url}`,
        ...(entry === 'dist/main.js' ? { report: 'false' } : {}),
      },
      { workspace: ws },
    );
    expect(step.code, step.stdout).toBe(1);
    expect(step.outputs.verdict).toBe('failed');
    const results = JSON.parse(step.outputs.results!) as ScriptOutcome[];
    expect(results.map((r) => [r.script, r.verdict, r['result-path']])).toEqual([
      ['load/api.js', 'passed', 'k6-distributed-result-load-api.js.json'],
      ['load/checkout.js', 'failed', 'k6-distributed-result-load-checkout.js.json'],
    ]);
    for (const r of results) {
      const file = JSON.parse(readFileSync(path.join(ws, r['result-path']), 'utf8'));
      expect(file.verdict).toBe(r.verdict);
      expect(file.metrics.http_reqs.values.count).toBe(20);
    }
    expect(existsSync(path.join(ws, 'k6-distributed-result.json'))).toBe(false);
    expect(step.summary).toContain('## `load/api.js`');
    expect(step.summary).toContain('## `load/checkout.js`');
    expect(step.summary.match(/^# k6 distributed: 2 scripts/gm)).toHaveLength(1);
    expect(step.annotations).toEqual([
      '::error::k6 distributed run failed: 1 of 2 scripts: load/checkout.js (thresholds crossed on the aggregate: http_reqs count<5)',
    ]);
  });
});

describe('dist/run.js with parallel: true', () => {
  /** A workspace with two scripts that each load the target for `duration`. */
  function timedWorkspace(duration: string): string {
    const dir = tempDir('k6d-scripts-parallel-');
    mkdirSync(path.join(dir, 'load'));
    const timed = (threshold: string) => `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 2, duration: '${duration}', thresholds: { http_reqs: ['${threshold}'] } };
export default function () { http.get(__ENV.TARGET + '/api/items'); sleep(0.05); }
`;
    writeFileSync(path.join(dir, 'load/api.js'), timed('count>=1'));
    writeFileSync(path.join(dir, 'load/checkout.js'), timed('count<1'));
    return dir;
  }

  it('runs both scripts at once, each its own test with its own run id, result and verdict', async () => {
    const ws = timedWorkspace('3s');
    const step = await runAction(
      'dist/run.js',
      {
        script: 'load/api.js\nload/checkout.js',
        parallel: 'true',
        runners: '2',
        backend: 'local',
        'k6-args': `-e TARGET=${target.url}`,
      },
      { workspace: ws },
    );
    expect(step.code, step.stdout).toBe(1);
    const results = JSON.parse(step.outputs.results!) as ScriptOutcome[];
    expect(results.map((r) => [r.script, r.verdict])).toEqual([
      ['load/api.js', 'passed'],
      ['load/checkout.js', 'failed'],
    ]);
    const [api, checkout] = results.map(
      (r) => JSON.parse(readFileSync(path.join(ws, r['result-path']), 'utf8')) as RunResult,
    );
    // At once: each test started before the other ended (one after another, they could not overlap).
    expect(Date.parse(api!.startedAt)).toBeLessThan(Date.parse(checkout!.endedAt));
    expect(Date.parse(checkout!.startedAt)).toBeLessThan(Date.parse(api!.endedAt));
    expect(api!.runId).not.toBe(checkout!.runId);
    expect(api!.runners).toHaveLength(2);
    expect(checkout!.runners).toHaveLength(2);
    // Each script's log lines say whose they are; one summary with both.
    expect(step.stdout).toMatch(/^\[load\/api\.js\] .*started 2 runners/m);
    expect(step.stdout).toMatch(/^\[load\/checkout\.js\] .*started 2 runners/m);
    expect(step.summary.match(/^# k6 distributed: 2 scripts \(run at once\)/gm)).toHaveLength(1);
    expect(step.annotations).toEqual([
      '::error::k6 distributed run failed: 1 of 2 scripts: load/checkout.js (thresholds crossed on the aggregate: http_reqs count<1)',
    ]);
  });

  it('a cancelled workflow stops both, and each still gets its verdict and result', async () => {
    const ws = timedWorkspace('60s');
    const tmp = tempDir('k6d-scripts-parallel-tmp-');
    const { child, done } = startAction(
      'dist/run.js',
      {
        script: 'load/*.js',
        parallel: 'true',
        runners: '2',
        backend: 'local',
        'k6-args': `-e TARGET=${target.url}`,
      },
      { workspace: ws, env: { TMPDIR: tmp }, detached: true },
    );
    let stdout = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    await waitFor(
      () => (stdout.match(/started 2 runners/g) ?? []).length === 2,
      'both scripts to start their runners',
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await new Promise((r) => setTimeout(r, 1000));
    const cancelledAt = Date.now();
    // To the step's whole process group, as a cancelled job's signal reaches every process of it.
    process.kill(-child.pid!, 'SIGINT');
    const step = await done;
    expect(Date.now() - cancelledAt).toBeLessThan(30_000);
    expect(step.code).toBe(1);
    const results = JSON.parse(step.outputs.results!) as ScriptOutcome[];
    expect(results.map((r) => [r.script, r.verdict])).toEqual([
      ['load/api.js', 'failed'],
      ['load/checkout.js', 'failed'],
    ]);
    for (const r of results) {
      expect(r.failure).toContain('interrupted: the run was cancelled and every runner was stopped');
      const result = JSON.parse(readFileSync(path.join(ws, r['result-path']), 'utf8')) as RunResult;
      expect(result.metrics.http_reqs!.values.count).toBeGreaterThan(0);
    }
    expect(step.annotations).toContain(
      '::error::k6 distributed run interrupted: the workflow was cancelled; 2 of 2 scripts started, every runner stopped',
    );
    expect(k6ProcessesUnder(tmp)).toEqual([]);
  });
});
