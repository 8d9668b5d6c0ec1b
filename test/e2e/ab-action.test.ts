import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNodeTarget } from '../../src/demo/target.ts';
import { abResultSchema } from '../../src/result/ab-schema.ts';
import { runAction } from '../support/action.ts';
import { tempDir, writeScript } from '../support/cli.ts';

/*
 * The run action with ab-rounds, run the way GitHub runs it (INPUT_*, GITHUB_OUTPUT,
 * GITHUB_STEP_SUMMARY) from its source entry (the lead rebuilds dist/run.js from the same code),
 * with real k6 on the local backend against two real targets: 2 rounds, A then B, one A/B result
 * at result-path, and a paired verdict that says one pair cannot judge.
 */
describe('the run action with ab-rounds', () => {
  it('runs A then B, writes the A/B result and says one pair is inconclusive', async () => {
    const script = writeScript(`
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '2s', preAllocatedVUs: 4, maxVUs: 8 } } };
export default function () { http.get(__ENV.BASE_URL + '/api/items'); }
`);
    const [a, b] = [await startNodeTarget(), await startNodeTarget()];
    const workspace = tempDir('k6d-ab-action-');
    const step = await runAction(
      'src/actions/run/main.ts',
      {
        script,
        runners: '2',
        backend: 'local',
        'ab-rounds': '2',
        'ab-a-env': `BASE_URL=${a.url}`,
        'ab-b-env': `BASE_URL=${b.url}`,
      },
      { workspace },
    ).finally(() => Promise.all([a.stop(), b.stop()]));
    expect(step.code, step.stdout).toBe(0);
    expect(step.outputs).toMatchObject({
      verdict: 'passed',
      'ab-verdict': 'inconclusive',
      'result-path': 'k6-distributed-result.json',
      'html-report': '',
    });
    expect(step.outputs['run-id']!.split(',')).toHaveLength(2);
    expect(Number(step.outputs.rps)).toBeGreaterThan(0);
    const ab = abResultSchema.parse(
      JSON.parse(readFileSync(path.join(workspace, 'k6-distributed-result.json'), 'utf8')),
    );
    expect(ab.rounds.map((r) => r.side)).toEqual(['A', 'B']);
    expect(a.arrivals.length).toBe(ab.rounds[0]!.figures.requests);
    expect(b.arrivals.length).toBe(ab.rounds[1]!.figures.requests);
    expect(step.summary).toContain('## 🟡 A/B rounds: inconclusive');
    // The script has no checks: not measured, not gated.
    expect(step.summary).toContain('| Checks passed (not gated) | — | — | — | — | — | 🟡 inconclusive |');
    expect(step.summary).toContain('an interval needs at least 2 pairs \\(4 rounds\\); run more rounds');
  });
});
