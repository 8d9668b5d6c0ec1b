import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { k6Binary } from '../equivalence/harness.ts';
import { collectOutput, runCli, writeScript } from '../support/cli.ts';

// A threshold at the exact percentile (issue 25, defect 1): the trend holds the samples 0..399, so
// k6 gets p(99) = 395.01 and p(90) = 359.1 and passes `<=` and `>=` at those values. Split over 2
// and 4 runners the merge gave 395.01000000000005 and 359.1000000000001, and the run exited 99.

const script = writeScript(`
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';
const pct = new Trend('pct');
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 400 } },
  thresholds: { pct: ['p(99)<=395.01', 'p(99)>=395.01', 'p(90)<=359.1', 'p(90)>=359.1', 'p(99)<395.02'] },
};
export default function () { pct.add(exec.scenario.iterationInTest); }
`);
const dir = path.dirname(script);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a threshold at the exact percentile, as plain k6 judges it', () => {
  it('plain k6 run passes every threshold', async () => {
    const child = spawn(
      k6Binary(),
      ['run', '--no-usage-report', '-q', '--summary-export', 'k6.json', script],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const run = await collectOutput(child);
    expect(run.code, run.stderr).toBe(0);
    const k6 = JSON.parse(readFileSync(path.join(dir, 'k6.json'), 'utf8')) as {
      metrics: Record<string, Record<string, number>>;
    };
    expect(k6.metrics.pct!['p(90)']).toBe(359.1);
  }, 60_000);

  it.each([1, 2, 4])(
    '%i runners pass too (exit 0), at values within 1e-9 of k6',
    async (n) => {
      const out = path.join(dir, `r${n}.json`);
      const run = await runCli(['run', script, '-n', String(n), '-o', out, '--no-html']);
      expect(run.code, run.stderr).toBe(0);
      const rows = run.result!.thresholds;
      expect(rows.map((r) => [r.expression, r.ok])).toEqual([
        ['p(99)<=395.01', true],
        ['p(99)>=395.01', true],
        ['p(90)<=359.1', true],
        ['p(90)>=359.1', true],
        ['p(99)<395.02', true],
      ]);
      expect(Math.abs(rows[0]!.observed! - 395.01)).toBeLessThan(1e-9);
      expect(Math.abs(rows[2]!.observed! - 359.1)).toBeLessThan(1e-9);
    },
    120_000,
  );
});
