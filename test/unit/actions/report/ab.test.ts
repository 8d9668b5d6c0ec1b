import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { parseReportInputs } from '../../../../src/actions/report/inputs.ts';
import { report } from '../../../../src/actions/report/report.ts';
import { buildAbResult } from '../../../../src/compare/ab-result.ts';
import type { AbResult } from '../../../../src/result/ab-schema.ts';
import {
  forkRunContext,
  nockNewComment,
  OWNER,
  PR_PAYLOAD,
  prContext,
  REPO,
  serveForkBundlePost,
  useNock,
} from '../../../support/github.ts';
import { makeResult } from '../../../support/results.ts';
import { tempDir } from '../../../support/temp.ts';
import { reportHarness } from './support/harness.ts';

/*
 * The report action on an A/B result: the paired section is the comment, judged again with the
 * step's own gate and tolerances; a fork's bundle carries its rounds and the privileged step judges
 * them. GitHub's REST API is nock (as in report.test.ts); the artifact upload service cannot run
 * here, so uploads go to a fake that keeps them.
 */

useNock();

const ABBA = ['A', 'B', 'B', 'A', 'A', 'B'] as const;

/** Six rounds: B's p95 is `ratio` times A's, with a little noise. */
function abResult(ratio: number): AbResult {
  return buildAbResult({
    script: 'load.js',
    a: { label: 'base', env: { BASE_URL: 'http://127.0.0.1:8081' }, k6Args: [] },
    b: { label: 'head', env: { BASE_URL: 'http://127.0.0.1:8082' }, k6Args: [] },
    rounds: ABBA.map((side, i) => ({
      round: i + 1,
      block: Math.floor(i / 4) + 1,
      side,
      result: makeResult(
        { p95: 22 * (side === 'B' ? ratio : 1) * (1 + 0.01 * ((i * 7) % 3)) },
        { startedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() },
      ),
    })),
    interrupted: false,
  });
}

async function inputs(ab: AbResult, extra: Record<string, string> = {}) {
  const file = path.join(tempDir('k6d-ab-'), 'k6-distributed-ab.json');
  await writeFile(file, JSON.stringify(ab));
  return parseReportInputs({ 'github-token': 'ghs_test', result: file, ...extra });
}

describe('the report action on an A/B result', () => {
  it('comments the paired section and fails the step on a paired regression, reading no baseline', async () => {
    const { deps, summaries } = reportHarness(prContext());
    // Only the comment calls: nock refuses any other request (no baseline, no history is read).
    const posted = nockNewComment(nock('https://api.github.com'), 77);
    const outcome = await report(await inputs(abResult(1.5)), deps);
    expect(outcome.outputs).toMatchObject({
      verdict: 'regressed',
      'run-verdict': 'passed',
      'comment-url': `https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-77`,
    });
    expect(outcome.failure).toMatch(
      /^performance regressed on paired A\/B rounds: Latency p95: B is worse by a mean \+5\d\.\d%/,
    );
    const body = posted();
    expect(
      body.startsWith(
        '<!-- k6-distributed:report workflow=perf job=load-test key=default -->\n## k6 load test: 🔴 regressed on paired A/B rounds (6 rounds, 95% level)\n',
      ),
    ).toBe(true);
    expect(body).toContain('### 🔴 A/B rounds: regressed');
    expect(body).toContain('Reference: **paired rounds**. 6 rounds (K = 6, 3 A-B pairs) in ABBA order');
    expect(body).toMatch(
      /\| Latency p95 \| 22\.\d\dms \| 3\d\.\d\dms \| \+5\d\.\d% \| \+\d+\.\d% to \+\d+\.\d% \| \+10\.0% \| 🔴 regressed \|/,
    );
    // The job summary is the same body.
    expect(summaries[0]).toBe(body);
  });

  it("judges with the step's own tolerances, not the file's judgement", async () => {
    const { deps } = reportHarness(prContext());
    const posted = nockNewComment(nock('https://api.github.com'), 78);
    const outcome = await report(await inputs(abResult(1.5), { tolerances: 'p95: 80%; p99: 80%' }), deps);
    expect(outcome.outputs.verdict).toBe('no regression');
    expect(outcome.failure).toBeUndefined();
    expect(posted()).toContain('### 🟢 A/B rounds: no regression');
  });

  it('refuses an A/B result in mode store, naming the input', async () => {
    const { deps } = reportHarness(prContext());
    await expect(report({ ...(await inputs(abResult(1))), mode: 'store' }, deps)).rejects.toThrow(
      /^result: .*k6-distributed-ab\.json is an A\/B result, for a pull request's comment \(modes comment and bundle\); mode store stores or posts single runs$/,
    );
  });

  it("bundles a fork's rounds; post-bundle judges them itself and says whose figures they are", async () => {
    const fork = structuredClone(PR_PAYLOAD);
    fork.pull_request.head.repo.full_name = 'mallory/Hello-World';
    const pr = reportHarness(prContext(fork));
    const outcome = await report(await inputs(abResult(1.5)), pr.deps);
    expect(outcome.outputs).toMatchObject({ mode: 'bundle', verdict: 'regressed', 'artifact-id': '8001' });
    const bundle = JSON.parse(pr.uploads[0]!.files['report.json']!);
    expect(bundle.ab.rounds).toHaveLength(6);
    expect(bundle.input).toBeUndefined();

    // The fork may have rewritten its own judgement: it is not read.
    bundle.ab.paired.verdict = 'no regression';
    bundle.ab.paired.level = 0.01;
    const post = reportHarness(forkRunContext({ workflow: 'post k6 report', workflowRunId: 9100 }));
    const { scope, blob, posted } = serveForkBundlePost(fork.pull_request, {
      'report.json': JSON.stringify(bundle),
    });
    const outcome2 = await report(await inputs(abResult(1)), post.deps);
    expect(outcome2.failure).toBeUndefined();
    expect(outcome2.outputs).toMatchObject({ mode: 'post-bundle', verdict: 'regressed' });
    const body = posted();
    expect(body.startsWith('<!-- k6-distributed:report workflow=perf job=comment key=default -->')).toBe(
      true,
    );
    expect(body).toContain(
      `Figures as reported by [the fork's run](https://github.com/${OWNER}/${REPO}/actions/runs/9000); judged here with this workflow's gate and tolerances.`,
    );
    expect(body).toContain('**regressed** at the 95% level');
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });
});
