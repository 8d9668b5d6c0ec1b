import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNodeTarget } from '../../src/demo/target.ts';
import { runCli, writeScript } from '../support/cli.ts';

/*
 * A load generator that cannot keep up, from a real run of real k6 processes: a
 * constant-arrival-rate scenario that asks 40 iterations/s of 4 VUs over 2 runners against a
 * target that answers in 500 ms (at most 8 iterations/s). k6 drops the rest, pins its VUs at
 * maxVUs and warns "Insufficient VUs"; the result and the CLI's reports say the load generator
 * saturated.
 */
const SCRIPT = `
import http from 'k6/http';
export const options = {
  scenarios: {
    s: { executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s', duration: '6s', preAllocatedVUs: 2, maxVUs: 4 },
  },
};
export default function () {
  http.get(__ENV.TARGET + '/slow?ms=500');
}
`;

describe('a saturated load generator', () => {
  it('is saturated in the result, with dropped iterations, and the reports warn at the top', async () => {
    const script = writeScript(SCRIPT);
    const report = path.join(path.dirname(script), 'report.md');
    const target = await startNodeTarget();
    const run = await runCli([
      'run',
      script,
      '--runners',
      '2',
      '--report',
      report,
      '--',
      '-e',
      `TARGET=${target.url}`,
    ]).finally(() => target.stop());
    expect(run.code, run.stderr).toBe(0);
    const lg = run.result!.loadGenerator as Record<string, unknown> & {
      saturated: boolean;
      reasons: string[];
      runners: Array<Record<string, unknown>>;
    };
    expect(lg.saturated).toBe(true);
    expect(lg.droppedIterations).toBeGreaterThan(0);
    expect(lg.vusMaxReached).toBe(true);
    expect(lg.insufficientVUs).toBeGreaterThanOrEqual(1);
    expect(lg.runners).toHaveLength(2);
    for (const r of lg.runners) {
      expect(r.droppedIterations).toBeGreaterThan(0);
      expect(r).toMatchObject({ vus: 2, vusMax: 2, vusMaxReached: true });
      // Local runners' CPU is read from /proc: a fraction of a core, small for sleeping VUs.
      // A test of at least CPU_MIN_WINDOW_S (5 s) has a CPU figure.
      expect(typeof r.cpu).toBe('number');
    }
    expect(lg.reasons.join('\n')).toMatch(/runner \d dropped [\d,]+ of [\d,]+ iterations \([\d.]+%\)/);
    expect(lg.reasons.join('\n')).toMatch(/runner \d hit maxVUs \(2 of 2\) and k6 warned "Insufficient VUs"/);
    // The terminal report and the markdown report show the warning above everything else.
    expect(run.stdout).toContain('⚠️ The load generator saturated: runner');
    expect(run.stdout.indexOf('⚠️')).toBeLessThan(run.stdout.indexOf('THRESHOLDS'));
    const markdown = readFileSync(report, 'utf8').split('\n');
    expect(markdown[2]).toMatch(/^⚠️ The load generator saturated: runner \d dropped/);
  });
});
