import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, writeScript } from '../support/cli.ts';

// exec.scenario.iterationInTest over 2 runners (issue 25, defect 2), with real k6: dense (0 to the
// iteration count − 1, as in one k6) for shared-iterations and the arrival-rate executors, gappy
// for per-vu-iterations, and the preflight says so before the run (docs/how-it-works.md).

const dir = tempDir('k6d-iit-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A script that records every iterationInTest in the trend `iit`, with one scenario. */
function script(scenario: string): string {
  return writeScript(`
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';
const iit = new Trend('iit');
export const options = { scenarios: { s: { ${scenario} } } };
export default function () { iit.add(exec.scenario.iterationInTest); }
`);
}

describe('exec.scenario.iterationInTest over 2 runners', () => {
  it.each([
    ['shared-iterations', "executor: 'shared-iterations', vus: 3, iterations: 15"],
    [
      'constant-arrival-rate',
      "executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '1s', preAllocatedVUs: 3",
    ],
    [
      'ramping-arrival-rate',
      "executor: 'ramping-arrival-rate', startRate: 10, stages: [{ target: 30, duration: '1s' }], preAllocatedVUs: 3",
    ],
  ])(
    '%s keeps it dense, with no warning',
    async (executor, scenario) => {
      const run = await runCli([
        'run',
        script(scenario),
        '-n',
        '2',
        '-o',
        path.join(dir, `${executor}.json`),
      ]);
      expect(run.code, run.stderr).toBe(0);
      const { count, max } = run.result!.metrics.iit!.values;
      expect(max).toBe(count! - 1);
      expect(run.stderr).not.toMatch(/iterationInTest/);
    },
    60_000,
  );

  it('per-vu-iterations has gaps (18 where k6 reaches 14), and the preflight warns before the run', async () => {
    const run = await runCli([
      'run',
      script("executor: 'per-vu-iterations', vus: 3, iterations: 5"),
      '-n',
      '2',
      '-o',
      path.join(dir, 'per-vu.json'),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result!.metrics.iit!.values).toMatchObject({ count: 15, max: 18 });
    const warning = run.stderr.indexOf(
      'scenario s: the script reads exec.scenario.iterationInTest, which has gaps over 2 runners with per-vu-iterations',
    );
    expect(warning, run.stderr).toBeGreaterThanOrEqual(0);
    expect(warning).toBeLessThan(run.stderr.indexOf('started'));
  }, 60_000);
});
