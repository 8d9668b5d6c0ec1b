import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readRunInputs } from '../../../../src/actions/run/inputs.ts';
import { checkAbReportMode } from '../../../../src/actions/run-and-report/inputs.ts';
import type { RunConfig } from '../../../../src/config.ts';
import { abResultSchema } from '../../../../src/result/ab-schema.ts';
import { harness } from './support/harness.ts';

/*
 * The run action with `ab-rounds` (src/actions/run/ab.ts), over the fake orchestration of
 * support/harness.ts: the rounds' order and k6 flags, their run ids, the A/B result at result-path,
 * the outputs, and the inputs' errors. Real k6 rounds run in test/e2e/ab-rounds.test.ts.
 */

const AB = {
  'ab-a-env': 'BASE_URL=http://127.0.0.1:8081',
  'ab-b-env': 'BASE_URL=http://127.0.0.1:8082\nMODE=new',
};

describe('the run action with ab-rounds', () => {
  it('runs K rounds in ABBA order, each with its side flags and run id, and writes one A/B result', async () => {
    const h = harness(
      { script: 'load.js', runners: '2', 'ab-rounds': '4', ...AB },
      { 'load.js': { runners: [{}, {}] } },
    );
    // No k6 preflight here (the harness fakes the orchestration); test/e2e/ab-rounds.test.ts runs it.
    h.deps.checkAbSide = async () => {};
    const seen: RunConfig[] = [];
    const runTest = h.deps.runTest;
    h.deps.runTest = (config, d) => {
      seen.push(config);
      return runTest(config, d);
    };
    const outcome = await h.run();
    expect(outcome.failure).toBeUndefined();
    expect(seen.map((c) => c.k6Args)).toEqual([
      ['-e', 'BASE_URL=http://127.0.0.1:8081'],
      ['-e', 'BASE_URL=http://127.0.0.1:8082', '-e', 'MODE=new'],
      ['-e', 'BASE_URL=http://127.0.0.1:8082', '-e', 'MODE=new'],
      ['-e', 'BASE_URL=http://127.0.0.1:8081'],
    ]);
    // Each round its own result file (removed), never the step's result-path.
    expect(new Set(seen.map((c) => c.resultPath)).size).toBe(4);
    expect(seen.some((c) => c.resultPath === outcome.outputs['result-path'])).toBe(false);
    const runIds = h.runs.map((r) => r.runId);
    expect(new Set(runIds).size).toBe(4);
    expect(outcome.outputs['run-id']).toBe(runIds.join(','));

    const ab = abResultSchema.parse(JSON.parse(readFileSync(outcome.outputs['result-path']!, 'utf8')));
    expect(ab.rounds.map((r) => r.side).join('')).toBe('ABBA');
    expect(ab.rounds.map((r) => r.runId)).toEqual(runIds);
    expect(ab.b.env).toEqual({ BASE_URL: 'http://127.0.0.1:8082', MODE: 'new' });
    expect(outcome.outputs).toMatchObject({
      verdict: 'passed',
      'ab-verdict': ab.paired.verdict,
      'html-report': '',
      rps: String(ab.b.aggregate.rps),
    });
    expect(outcome.jobSummary?.markdown).toContain('A/B rounds');
    expect(outcome.jobSummary?.markdown).toContain('Reference: **paired rounds**. 4 rounds');
    expect(outcome.ran?.runs[0]?.ab?.rounds).toHaveLength(4);
    expect(h.state.at(-1)).toEqual(['cleaned', 'true']);
  });

  it.each([
    [{ 'ab-a-env': 'X=1' }, 'ab-a-env: is for A/B rounds; give ab-rounds too (e.g. 6)'],
    [
      { 'ab-rounds': '5', ...AB },
      'ab-rounds: 5 rounds; give an even number of at least 2 (the rounds are judged in A-B pairs), e.g. 6',
    ],
    [{ 'ab-rounds': 'six', ...AB }, 'ab-rounds: "six" is not a whole number of rounds'],
    [
      { 'ab-rounds': '4', 'ab-a-env': 'X=1', 'ab-b-env': 'X=1' },
      'ab-a-env/ab-b-env (or ab-a-k6-args/ab-b-k6-args): A and B are the same; give each side its own value',
    ],
    [{ 'ab-rounds': '4', 'ab-a-env': 'nope' }, 'ab-a-env: "nope" is not KEY=value'],
    [{ 'ab-rounds': '4', 'ab-b-k6-args': '--tag "x' }, 'ab-b-k6-args: '],
    [
      { 'ab-rounds': '4', ...AB, 'junit-path': 'k6.xml' },
      'junit-path: A/B rounds write one A/B result and no JUnit report',
    ],
  ])('refuses %o before any run: %s', (inputs, message) => {
    const given: Record<string, string> = { script: 'load.js', ...inputs };
    expect(() => readRunInputs((name) => given[name] ?? '')).toThrow(message);
  });
});

describe('the root action with ab-rounds', () => {
  it('refuses report mode store before any runner starts; comment, bundle and no report are fine', () => {
    expect(() => checkAbReportMode(true, 'store')).toThrow(
      'ab-rounds: A/B rounds are reported on a pull request (report mode comment or bundle)',
    );
    for (const mode of ['comment', 'bundle', undefined])
      expect(() => checkAbReportMode(true, mode)).not.toThrow();
    expect(() => checkAbReportMode(false, 'store')).not.toThrow();
  });
});
