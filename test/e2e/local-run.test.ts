import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { exactPercentile } from '../../src/result/quantiles.ts';
import { k6ProcessesUnder, leftovers, runCli, tempDir, writeScript } from '../support/cli.ts';

// Real k6 processes against a real HTTP server on 127.0.0.1, through the real CLI.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

function countSince(from: number, pathname: string): number {
  return target.arrivals.slice(from).filter((a) => a.path === pathname).length;
}

const sharedIterations = (iterations: number) => `
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 8, iterations: ${iterations} } } };
export default function () { http.get(__ENV.TARGET + '/shared'); }
`;

describe('execution segments add up to the whole test', () => {
  it.each([1, 3, 4])('1000 shared iterations with %i runners', async (runners) => {
    const script = writeScript(sharedIterations(1000));
    const before = target.arrivals.length;
    const run = await runCli([
      'run',
      script,
      '--runners',
      String(runners),
      '--',
      '-e',
      `TARGET=${target.url}`,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result!.metrics.iterations!.values.count).toBe(1000);
    expect(run.result!.metrics.http_reqs!.values.count).toBe(1000);
    expect(countSince(before, '/shared')).toBe(1000);
    expect(run.result!.runners).toHaveLength(runners);
    expect(run.result!.runners.reduce((sum, r) => sum + (r.iterations ?? 0), 0)).toBe(1000);
  });

  it('splits VUs: 7 constant VUs over 3 runners are 7 VUs in all', async () => {
    const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 7, duration: '2s' };
export default function () {
  http.get(__ENV.TARGET + '/vu', { headers: { 'x-runner': __ENV.K6D_RUNNER_INDEX + '/' + __VU } });
  sleep(0.1);
}
`);
    const before = target.arrivals.length;
    const run = await runCli(['run', script, '--runners', '3', '--', '-e', `TARGET=${target.url}`]);
    expect(run.code, run.stderr).toBe(0);
    // Every runner's compact summary was read (the bundled entry module's handleSummary ran in k6).
    expect(run.stdout + run.stderr).not.toContain('no compact summary');
    const vus = new Set(
      target.arrivals
        .slice(before)
        .filter((a) => a.path === '/vu')
        .map((a) => a.runner),
    );
    expect(vus.size).toBe(7);
    expect(run.result!.metrics.vus_max!.values.value).toBe(7);
  });
});

describe('environment', () => {
  it('-e wins over the runner process environment, as in a plain k6 run', async () => {
    const script = writeScript(`
import exec from 'k6/execution';
export const options = { vus: 2, iterations: 2 };
export default function () { if (__ENV.GREETING !== 'from-flag') exec.test.abort('GREETING=' + __ENV.GREETING); }
`);
    const run = await runCli(['run', script, '--runners', '2', '--', '-e', 'GREETING=from-flag'], {
      env: { GREETING: 'from-environment' },
    });
    expect(run.code, run.stderr).toBe(0);
  });
});

describe('synchronised start', () => {
  it('sends no request before every runner is ready, even when runners initialise at different speeds', async () => {
    // Runner i spends i × 1.5 s in its init code, so unsynchronised runners would start 4.5 s apart.
    const script = writeScript(`
import http from 'k6/http';
const idx = Number(__ENV.K6D_RUNNER_INDEX);
if (__VU === 0 && idx > 0) { const end = Date.now() + 1500 * idx; while (Date.now() < end) {} }
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 4, duration: '2s' } } };
export default function () { http.get(__ENV.TARGET + '/sync', { headers: { 'x-runner': __ENV.K6D_RUNNER_INDEX } }); }
`);
    const before = target.arrivals.length;
    const run = await runCli(['run', script, '--runners', '4', '--', '-e', `TARGET=${target.url}`]);
    expect(run.code, run.stderr).toBe(0);
    const arrivals = target.arrivals.slice(before).filter((a) => a.path === '/sync');
    const first = new Map<string, number>();
    for (const a of arrivals) if (!first.has(a.runner!)) first.set(a.runner!, a.at);
    expect([...first.keys()].sort()).toEqual(['0', '1', '2', '3']);
    const firsts = [...first.values()];
    // Seen on the target's side: every runner's first request within 250 ms of the others.
    expect(Math.max(...firsts) - Math.min(...firsts)).toBeLessThan(250);
    // And none before the orchestrator sent the start (ISO time has ms resolution; two processes' clocks).
    expect(Math.min(...firsts)).toBeGreaterThanOrEqual(Date.parse(run.result!.startedAt) - 2);
    expect(run.result!.startSkewMs).toBeLessThan(250);
    expect(run.result!.runners.map((r) => r.startOffsetMs)).toContain(0);
  });
});

describe('aggregation end to end', () => {
  it('matches the raw samples of every runner (--out json)', async () => {
    const outDir = tempDir('k6d-raw-');
    const script = writeScript(`
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 6, iterations: 3000 } } };
export default function () { http.get(__ENV.TARGET + '/slow?ms=' + (1 + (__ITER % 7))); }
`);
    const run = await runCli([
      'run',
      script,
      '--runners',
      '3',
      '--',
      '-e',
      `TARGET=${target.url}`,
      '--out',
      `json=${outDir}/raw-{runner}.json`,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const samples: number[] = [];
    for (const runner of [0, 1, 2]) {
      for (const line of readFileSync(path.join(outDir, `raw-${runner}.json`), 'utf8').split('\n')) {
        if (!line.includes('"metric":"http_req_duration"') || !line.includes('"type":"Point"')) continue;
        samples.push((JSON.parse(line) as { data: { value: number } }).data.value);
      }
    }
    samples.sort((a, b) => a - b);
    const v = run.result!.metrics.http_req_duration!.values;
    expect(v.count).toBe(samples.length);
    expect(v.count).toBe(3000);
    expect(v.min).toBe(samples[0]);
    expect(v.max).toBe(samples.at(-1));
    expect(v.avg).toBeCloseTo(samples.reduce((a, b) => a + b, 0) / samples.length, 6);
    // The delays are whole ms, so samples cluster in steps; interpolating a runner's grid inside
    // a step costs a little, most near the top. Averaging the runners' p99s is not checked here
    // (these runners are alike); bench/ measures that against a slower runner.
    for (const [p, tolerance] of [
      [50, 0.01],
      [90, 0.01],
      [95, 0.015],
      [99, 0.03],
    ] as const) {
      const truth = exactPercentile(samples, p);
      expect(Math.abs(v[`p(${p})`]! - truth) / truth, `p(${p})`).toBeLessThan(tolerance);
    }
  });
});

describe('verdict', () => {
  it('fails on a threshold that every runner passes on its slice but the aggregate crosses', async () => {
    // 400 requests over 4 runners: each slice has 100 (< 150), the whole test 400.
    const script = writeScript(`
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 400 } },
  thresholds: { http_reqs: ['count<150'], checks: ['rate>0.99'], 'http_req_duration{scenario:s}': ['p(99.9)<5000'] },
};
export default function () { check(http.get(__ENV.TARGET + '/t'), { 'is 200': (r) => r.status === 200 }); }
`);
    const run = await runCli(['run', script, '--runners', '4', '--', '-e', `TARGET=${target.url}`]);
    expect(run.code).toBe(99);
    expect(run.result!.verdict).toBe('failed');
    expect(run.result!.failureKinds).toEqual(['thresholds']);
    expect(run.result!.thresholds.map((t) => [t.metric, t.expression, t.ok, t.observed])).toEqual([
      ['checks', 'rate>0.99', true, 1],
      ['http_req_duration{scenario:s}', 'p(99.9)<5000', true, expect.any(Number)],
      ['http_reqs', 'count<150', false, 400],
    ]);
    expect(run.result!.runners.every((r) => r.ok && r.requests === 100)).toBe(true);
    expect(run.stdout).toContain('✗ failed (thresholds)');
    expect(run.stdout).toMatch(/^ {4}✗ 'count<150' count=400$/m);
  });

  it("keeps every runner's data when the script's handleSummaryTimeout is shorter than a runner's summary takes", async () => {
    // The script's timeout is for its own handleSummary; k6 passes with it (exit 0), and so must we.
    const script = writeScript(`
import http from 'k6/http';
export const options = { vus: 2, iterations: 10, handleSummaryTimeout: '1ms', thresholds: { http_reqs: ['count==10'] } };
export default function () { http.get(__ENV.TARGET + '/hst'); }
`);
    const run = await runCli(['run', script, '--runners', '2', '--', '-e', `TARGET=${target.url}`]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result!.failures).toEqual([]);
    expect(run.result!.thresholds.map((t) => [t.expression, t.ok, t.observed])).toEqual([
      ['count==10', true, 10],
    ]);
  });

  it('names a runner that fails mid-test and stops the others', async () => {
    const script = writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = { vus: 4, duration: '20s' };
export default function () {
  http.get(__ENV.TARGET + '/crash');
  if (__ENV.K6D_RUNNER_INDEX === '2' && exec.scenario.iterationInInstance === 3) exec.test.abort('runner two gives up');
  sleep(0.2);
}
`);
    const started = Date.now();
    const run = await runCli(['run', script, '--runners', '4', '--', '-e', `TARGET=${target.url}`]);
    // test.abort() ends a plain k6 run with 108: so does the CLI.
    expect(run.code).toBe(108);
    expect(Date.now() - started).toBeLessThan(15_000);
    const r = run.result!;
    expect(r.verdict).toBe('failed');
    expect(r.failureKinds).toEqual(['runner']);
    expect(r.failures[0]).toMatch(
      /runner 2 failed \(exit 108: the script called test.abort\(\)\).*runner two gives up/,
    );
    expect(r.runners[2]).toMatchObject({ ok: false, exitCode: 108 });
    expect(r.runners.filter((x) => x.index !== 2).map((x) => x.exitCode)).toEqual([103, 103, 103]);
    expect(k6ProcessesUnder(run.tmp)).toEqual([]);
    expect(leftovers(run.tmp)).toEqual([]);
  });
});
