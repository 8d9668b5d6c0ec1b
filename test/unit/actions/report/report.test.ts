import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import type { ActionContext } from '../../../../src/actions/report/context.ts';
import { parseReportInputs } from '../../../../src/actions/report/inputs.ts';
import { MAX_BUNDLE_JSON_BYTES } from '../../../../src/actions/report/post-bundle.ts';
import { report, resolveMode } from '../../../../src/actions/report/report.ts';
import { METRIC_IDS } from '../../../../src/compare/judgement.ts';
import { BASELINE_METADATA_FILE, RESULT_FILE } from '../../../../src/github/artifacts.ts';
import { COMMENT_LIMIT } from '../../../../src/pr-comment/fit.ts';
import { forkNote } from '../../../../src/pr-comment/sections.ts';
import type { RunResult } from '../../../../src/result/schema.ts';
import {
  API,
  artifact,
  artifacts,
  BASE_SHA,
  BASELINE_RUNS,
  BASELINE_RUNS_QUERY,
  comment,
  compare,
  FORBIDDEN,
  forkRunContext,
  HEAD_SHA,
  MERGE_BASE,
  nockBaseRuns,
  nockBundleListing,
  nockNewComment,
  OWNER,
  PR_PAYLOAD,
  prContext,
  REPO,
  REPO_PATH,
  serveArtifact,
  serveForkBundlePost,
  useNock,
  workflowRun,
  workflowRuns,
} from '../../../support/github.ts';
import { makeResult } from '../../../support/results.ts';
import { tempDir } from '../../../support/temp.ts';
import { reportHarness } from './support/harness.ts';

useNock();

const BASELINE = 'k6-distributed-baseline-default';
const RUNS = BASELINE_RUNS;
const COMMENTS = `${REPO_PATH}/issues/2/comments`;
const runsQuery = BASELINE_RUNS_QUERY;

async function resultFile(result: RunResult): Promise<string> {
  const dir = tempDir('k6d-result-');
  const file = path.join(dir, 'k6-distributed-result.json');
  await writeFile(file, JSON.stringify(result));
  return file;
}

async function inputs(head: RunResult, extra: Record<string, string> = {}) {
  return parseReportInputs({ 'github-token': 'ghs_test', result: await resultFile(head), ...extra });
}

/** The baseline lookup of the PR in the payload: run 501 at the merge-base stored `base`. */
function nockBaseline(scope: nock.Scope, base: RunResult): nock.Scope {
  nockBaseRuns(scope, { atMergeBase: [workflowRun(501, MERGE_BASE)], newest: [workflowRun(501, MERGE_BASE)] })
    .get(`${REPO_PATH}/actions/runs/501/artifacts`)
    .query({ name: BASELINE, per_page: '100' })
    .reply(200, artifacts([artifact(7001, BASELINE, 501)]));
  return serveArtifact(scope, 7001, {
    [RESULT_FILE]: JSON.stringify(base),
    [BASELINE_METADATA_FILE]: JSON.stringify({ schema: 'k6-distributed/baseline@1', sha: MERGE_BASE }),
  });
}

/** No run of the base branch stored a result. */
function nockNoBaseline(scope: nock.Scope): nock.Scope {
  return nockBaseRuns(scope, { atMergeBase: [], newest: [] });
}

describe('mode comment', () => {
  it('fails the step on a gated regression, with outputs, annotations and the same summary as the comment', async () => {
    const { deps, summaries } = reportHarness();
    const scope = nock(API);
    const blob = nockBaseline(scope, makeResult());
    const posted = nockNewComment(scope, 77);
    const outcome = await report(await inputs(makeResult({ p95: 35, p50: 14 })), deps);
    expect(outcome.failure).toBe(
      'performance regressed against master: Latency p95 22.00ms -> 35.00ms (+13.00ms (+59.1%))',
    );
    expect(outcome.outputs).toMatchObject({
      mode: 'comment',
      verdict: 'regressed',
      'run-verdict': 'passed',
      'baseline-sha': MERGE_BASE,
      'baseline-run-id': '501',
      'comment-url': `https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-77`,
      'artifact-id': '',
      'junit-path': '',
    });
    expect(JSON.parse(outcome.outputs.regressions)).toEqual(
      [
        {
          metric: 'p50',
          source: 'http_req_duration{expected_response:true} p(50)',
          base: 10,
          head: 14,
          delta: 4,
          deltaPercent: 40,
          unit: 'ms',
          gated: false,
          // No in-run intervals in these fixtures: the default 2% between-run noise alone,
          // Δ ± 1.645 × √2 × 0.2 ms.
          interval: [
            expect.closeTo(4 - 1.645 * Math.SQRT2 * 0.2, 2),
            expect.closeTo(4 + 1.645 * Math.SQRT2 * 0.2, 2),
          ],
          tolerance: 1,
        },
        {
          metric: 'p95',
          source: 'http_req_duration{expected_response:true} p(95)',
          base: 22,
          head: 35,
          delta: 13,
          deltaPercent: (13 / 22) * 100,
          unit: 'ms',
          gated: true,
          interval: [
            expect.closeTo(13 - 1.645 * Math.SQRT2 * 0.44, 2),
            expect.closeTo(13 + 1.645 * Math.SQRT2 * 0.44, 2),
          ],
          tolerance: expect.closeTo(2.2, 9),
        },
      ].sort((a, b) => Number(b.gated) - Number(a.gated)),
    );
    expect(outcome.annotations.map((a) => [a.level, a.title])).toEqual([
      ['error', 'k6 regression: Latency p95'],
      ['warning', 'k6 regression: Latency p50'],
    ]);
    expect(posted()).toContain('<!-- k6-distributed:report workflow=perf job=load-test key=default -->');
    expect(posted()).toContain('**🔴 Regressed** against `master` at 99% confidence');
    expect(summaries).toEqual([posted()]);
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });

  it('reads the history of the base branch: skips and counts missing and expired results, and its spread judges', async () => {
    const { deps, logs } = reportHarness();
    const scope = nock(API);
    const newest = [506, 505, 504, 503, 502, 501, 500].map((id) =>
      workflowRun(id, id === 501 ? MERGE_BASE : String(id).repeat(14).slice(0, 40)),
    );
    nockBaseRuns(scope, { atMergeBase: [workflowRun(501, MERGE_BASE)], newest })
      .get(`${REPO_PATH}/actions/runs/501/artifacts`)
      .query({ name: BASELINE, per_page: '100' })
      .reply(200, artifacts([artifact(7001, BASELINE, 501)]));
    const blobs = [serveArtifact(scope, 7001, { [RESULT_FILE]: JSON.stringify(makeResult({ p95: 22 })) })];
    const listArtifacts = (run: number, list: ReturnType<typeof artifact>[]) =>
      scope
        .get(`${REPO_PATH}/actions/runs/${run}/artifacts`)
        .query({ name: BASELINE, per_page: '100' })
        .reply(200, artifacts(list));
    listArtifacts(506, []);
    listArtifacts(505, [artifact(7005, BASELINE, 505, { expired: true })]);
    // A noisy base branch: p95 20–26 ms (median 22, MAD 2: normal up to 30.9 ms).
    for (const [run, p95] of [
      [504, 20],
      [503, 26],
      [502, 21],
      [500, 25],
    ] as const) {
      listArtifacts(run, [artifact(run + 6500, BASELINE, run)]);
      blobs.push(serveArtifact(scope, run + 6500, { [RESULT_FILE]: JSON.stringify(makeResult({ p95 })) }));
    }
    const posted = nockNewComment(scope, 78);
    // +22.7% and +5 ms on the baseline run: beyond the tolerance, but the history's spread
    // (1.4826 × MAD = 2.97 ms) makes one run unable to tell: inconclusive, which does not fail.
    const input = await inputs(makeResult({ p95: 27 }), { 'history-runs': '5' });
    const outcome = await report(input, deps);
    expect(outcome.outputs.verdict).toBe('inconclusive');
    expect(outcome.warnings.join('\n')).toMatch(
      /^inconclusive: Latency p95 \+5\.00ms \(\+22\.7%\), interval .* could be within or beyond the tolerance; settle it with A\/B rounds/m,
    );
    expect(outcome.failure).toBeUndefined();
    expect(logs).toContain('history: 5 of 5 runs read, 2 skipped');
    expect(posted()).toContain('Trend of the gated metrics over the last 5 successful runs of `master`');
    expect(posted()).toContain('2 runs skipped: result artifact missing or expired.');
    expect(posted()).toContain(
      '| Latency p95 (gate) | 22.00ms | 27.00ms | +5.00ms (+22.7%) | −1.90ms … +11.90ms (tolerance 2.20ms) | 🟠 inconclusive |',
    );
    expect(posted()).toContain(
      "**Latency p95** +22.7% against the history's median 22.00ms; against the baseline run +5.00ms (+22.7%): 🟠 inconclusive",
    );
    // Oldest first, this PR last.
    expect(posted()).toContain(
      'x-axis "commit" ["5005005", "6dcb09b", "5025025", "5035035", "5045045", "this PR"]',
    );
    // The HTML report next to the result now has the comparison.
    const html = await readFile(input.resultPath.replace(/\.json$/, '.html'), 'utf8');
    expect(html).toContain('Compared with the baseline (master @ 6dcb09b)');
    expect(scope.isDone()).toBe(true);
    for (const blob of blobs) expect(blob.isDone()).toBe(true);
  });

  it('does not fail with fail-on-regression: false, and passes when nothing gated got worse', async () => {
    for (const [head, extra, verdict] of [
      [makeResult({ p95: 35 }), { 'fail-on-regression': 'false' }, 'regressed'],
      [makeResult({ p95: 22.5, rps: 430 }), {}, 'passed'],
    ] as const) {
      const { deps } = reportHarness();
      const scope = nock(API);
      const blob = nockBaseline(scope, makeResult());
      scope
        .get(COMMENTS)
        .query({ per_page: '100' })
        .reply(200, [comment(5, `<!-- k6-distributed:report workflow=perf job=load-test key=default -->`)]);
      scope.patch(`${REPO_PATH}/issues/comments/5`).reply(200, comment(5, 'x'));
      const outcome = await report(await inputs(head, extra), deps);
      expect(outcome.outputs.verdict).toBe(verdict);
      expect(outcome.failure).toBeUndefined();
      expect(scope.isDone()).toBe(true);
      expect(blob.isDone()).toBe(true);
    }
  });

  it('turns a 403 on a fork into a warning; the job summary still has the report', async () => {
    const fork = structuredClone(PR_PAYLOAD);
    fork.pull_request.head.repo.full_name = 'mallory/Hello-World';
    const { deps, summaries } = reportHarness(prContext(fork));
    const scope = nockNoBaseline(nock(API))
      .get(COMMENTS)
      .query({ per_page: '100' })
      .reply(200, [])
      .post(COMMENTS)
      .reply(403, FORBIDDEN);
    const outcome = await report(await inputs(makeResult(), { mode: 'comment' }), deps);
    expect(outcome.warnings).toEqual([
      "could not comment on pull request #2 (403 Resource not accessible by integration - https://docs.github.com/rest/issues/comments#create-an-issue-comment): a fork's pull request gets a read-only token; the report is in the job summary, and mode bundle with a workflow_run workflow in mode post-bundle posts it as a comment",
    ]);
    expect(outcome.failure).toBeUndefined();
    expect(outcome.outputs['comment-url']).toBe('');
    expect(outcome.outputs.verdict).toBe('no-baseline');
    expect(summaries[0]).toContain('**⚪ No baseline yet** against `master`');
    expect(scope.isDone()).toBe(true);
  });

  it('shows "no baseline yet" and "baseline expired" without failing', async () => {
    {
      const { deps } = reportHarness();
      const scope = nockNoBaseline(nock(API));
      const posted = nockNewComment(scope, 78);
      const outcome = await report(await inputs(makeResult({ p95: 500 })), deps);
      expect(outcome).toMatchObject({
        outputs: { verdict: 'no-baseline', 'baseline-sha': '' },
        annotations: [],
      });
      expect(outcome.failure).toBeUndefined();
      expect(posted()).toContain('**No baseline yet:**');
      expect(scope.isDone()).toBe(true);
    }
    {
      const { deps } = reportHarness();
      const scope = nock(API)
        .get(`${REPO_PATH}/compare/${BASE_SHA}...${HEAD_SHA}`)
        .query({ per_page: '1' })
        .reply(200, compare(MERGE_BASE))
        .get(RUNS)
        .query({ ...runsQuery, per_page: '10', head_sha: MERGE_BASE })
        .reply(200, workflowRuns([]))
        .get(RUNS)
        .query(runsQuery)
        .reply(200, workflowRuns([workflowRun(480, MERGE_BASE)]))
        .get(`${REPO_PATH}/actions/runs/480/artifacts`)
        .query({ name: BASELINE, per_page: '100' })
        .reply(200, artifacts([artifact(6001, BASELINE, 480, { expired: true })]));
      const posted = nockNewComment(scope, 79);
      const outcome = await report(await inputs(makeResult()), deps);
      expect(outcome.outputs.verdict).toBe('baseline-expired');
      expect(outcome.failure).toBeUndefined();
      expect(posted()).toContain('**Baseline expired:** the stored result of [run 480]');
      expect(scope.isDone()).toBe(true);
    }
  });

  it('compares with a baseline file instead of the stored artifact when given', async () => {
    const { deps } = reportHarness();
    const scope = nock(API)
      .get(COMMENTS)
      .query({ per_page: '100' })
      .reply(200, [])
      .post(COMMENTS)
      .reply(201, comment(80, 'x'));
    const outcome = await report(
      await inputs(makeResult({ rps: 300 }), { baseline: await resultFile(makeResult()), gate: 'p95' }),
      deps,
    );
    expect(outcome.outputs.verdict).toBe('passed'); // rps is worse but not gated
    expect(JSON.parse(outcome.outputs.regressions)).toMatchObject([{ metric: 'rps', gated: false }]);
    expect(outcome.annotations).toEqual([
      {
        level: 'warning',
        title: 'k6 regression: Requests per second',
        message:
          'Requests per second 400.0/s -> 300.0/s (-100.0/s (-25.0%)); interval of the change −109.3/s … −90.7/s (tolerance 40.0/s); noise: no in-run interval (older results) + between-run noise ±1.0% (default floor, no history) (not gated)',
      },
    ]);
    expect(scope.isDone()).toBe(true);
  });

  it('posts a body within 65,536 characters for a huge result; the job summary keeps the detail', async () => {
    const head = makeResult();
    head.runners = Array.from({ length: 1000 }, (_, i) => ({
      ...head.runners[0]!,
      index: i,
      segment: `${i}/1000:${i + 1}/1000`,
    }));
    const { deps, summaries } = reportHarness();
    const scope = nock(API);
    const blob = nockBaseline(scope, makeResult());
    const posted = nockNewComment(scope, 81);
    await report(await inputs(head), deps);
    console.log(
      `1,000 runners: comment ${posted().length} characters, job summary ${Buffer.byteLength(summaries[0]!)} bytes`,
    );
    expect(posted().length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(posted()).not.toContain('| 999 |');
    expect(posted()).toContain("Left out to fit GitHub's size limit: runners");
    expect(summaries[0]).toContain('| 999 |');
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });

  it('refuses a push event in one line that names the input', async () => {
    const { deps } = reportHarness({ ...prContext({}), eventName: 'push' });
    await expect(report(await inputs(makeResult(), { mode: 'comment' }), deps)).rejects.toThrow(
      'mode: comment needs a pull_request event, not push (use store on pushes, post-bundle on workflow_run)',
    );
  });
});

describe('mode store', () => {
  it('uploads the result and its metadata as the baseline artifact of the branch', async () => {
    const ctx: ActionContext = {
      ...prContext({ ref: 'refs/heads/master', after: MERGE_BASE }),
      eventName: 'push',
      ref: 'refs/heads/master',
      sha: MERGE_BASE,
      workflowRunId: 501,
    };
    const { deps, uploads, summaries } = reportHarness(ctx);
    const head = makeResult({
      environment: { runnerImage: 'grafana/k6:1.4.0', nodeSelector: { pool: 'k6' } },
    });
    const outcome = await report(await inputs(head, { 'retention-days': '30' }), deps);
    expect(outcome.outputs).toEqual({
      mode: 'store',
      verdict: 'stored',
      'run-verdict': 'passed',
      regressions: '[]',
      'baseline-sha': '',
      'baseline-run-id': '',
      'comment-url': '',
      'artifact-id': '8001',
      'junit-path': '',
    });
    expect(uploads).toHaveLength(1);
    expect(uploads[0]!.name).toBe(BASELINE);
    expect(uploads[0]!.retentionDays).toBe(30);
    expect(JSON.parse(uploads[0]!.files[RESULT_FILE]!)).toEqual(head);
    expect(JSON.parse(uploads[0]!.files[BASELINE_METADATA_FILE]!)).toMatchObject({
      schema: 'k6-distributed/baseline@1',
      key: 'default',
      sha: MERGE_BASE,
      ref: 'refs/heads/master',
      repository: `${OWNER}/${REPO}`,
      workflow: 'perf',
      job: 'load-test',
      runId: 501,
      k6Version: 'v2.2.0',
      runners: 2,
      runnerImage: 'grafana/k6:1.4.0',
      nodeSelector: { pool: 'k6' },
      scriptHash: 'a1b2c3',
    });
    expect(summaries[0]).toContain('stored as the baseline for `master`');
    // The HTML report travels with the result.
    expect(uploads[0]!.files['k6-distributed-report.html']).toContain(
      '<span class="verdict passed">PASSED</span>',
    );
  });
});

describe('fork pull requests: bundle, then post-bundle in a workflow_run workflow', () => {
  it('writes the bundle on the fork PR and posts it from the workflow_run, rendered again from data', async () => {
    const fork = structuredClone(PR_PAYLOAD);
    fork.pull_request.head.repo.full_name = 'mallory/Hello-World';
    const pr = reportHarness(prContext(fork));
    const scope = nock(API);
    const blob = nockBaseline(scope, makeResult());
    const outcome = await report(await inputs(makeResult({ p95: 35 })), pr.deps);
    expect(pr.logs[0]).toBe('mode: bundle (auto, event pull_request)');
    expect(outcome.outputs).toMatchObject({
      mode: 'bundle',
      verdict: 'regressed',
      'artifact-id': '8001',
      'comment-url': '',
    });
    expect(outcome.failure).toContain('performance regressed against master');
    expect(pr.uploads[0]!.name).toBe('k6-distributed-report-default');
    const bundle = JSON.parse(pr.uploads[0]!.files['report.json']!);
    expect(bundle).toMatchObject({
      prNumber: 2,
      headSha: HEAD_SHA,
      marker: { workflow: 'perf', job: 'load-test', key: 'default' },
    });
    expect(pr.uploads[0]!.files['report.md']).toBe(pr.summaries[0]);
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);

    // The fork could have written anything into the bundle: links, markdown and its marker are not used.
    bundle.marker = { workflow: 'release', job: 'deploy', key: 'prod' };
    bundle.input.links.runUrl = 'https://evil.example/phish';
    bundle.input.baseline.run.url = 'https://evil.example/phish';
    const post = reportHarness(forkRunContext({ workflow: 'post k6 report', workflowRunId: 9100 }));
    const {
      scope: scope2,
      blob: blob2,
      posted: postedBody,
    } = serveForkBundlePost(fork.pull_request, {
      'report.json': JSON.stringify(bundle),
      'report.md': '<img src=x onerror=alert(1)> not this',
    });
    // main's baseline is read again here, with this workflow's token, not taken from the bundle.
    const base2 = nockBaseline(scope2, makeResult());
    const outcome2 = await report(await inputs(makeResult()), post.deps);
    const posted = postedBody();
    expect(post.logs[0]).toBe('mode: post-bundle (auto, event workflow_run)');
    expect(outcome2.failure).toBeUndefined(); // the PR run's own check fails, not this one
    expect(outcome2.outputs).toMatchObject({
      mode: 'post-bundle',
      verdict: 'regressed',
      'baseline-run-id': '501',
      'comment-url': `https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-90`,
    });
    // The marker: the triggering workflow's name from the event, this job, this step's key.
    expect(posted.startsWith('<!-- k6-distributed:report workflow=perf job=comment key=default -->')).toBe(
      true,
    );
    expect(posted).not.toContain('evil.example');
    expect(posted).not.toContain('not this');
    expect(posted).toContain(`[workflow run](https://github.com/${OWNER}/${REPO}/actions/runs/9000)`);
    expect(posted).toContain(`[run 501](https://github.com/${OWNER}/${REPO}/actions/runs/501)`);
    // Under the verdict: the head figures are the fork's run's, as it reported them.
    const note = forkNote(`https://github.com/${OWNER}/${REPO}/actions/runs/9000`);
    expect(posted).toContain(
      `(tolerance 2.20ms): beyond the tolerance and not explained by the noise.\n\n${note}\n`,
    );
    // The same report as the PR run's job summary, but for the marker line and that note.
    const trusted = posted.replace(`\n\n${note}`, '');
    expect(trusted.slice(trusted.indexOf('\n'))).toBe(pr.summaries[0]!.slice(pr.summaries[0]!.indexOf('\n')));
    expect(scope2.isDone()).toBe(true);
    expect(blob2.isDone()).toBe(true);
    expect(base2.isDone()).toBe(true);
  });

  it("finds the PR by head SHA when the bundle's number does not match the run", async () => {
    const { deps } = reportHarness({
      ...prContext({
        action: 'completed',
        workflow_run: workflowRun(9000, HEAD_SHA, {
          event: 'pull_request',
          headRepo: 'mallory/Hello-World',
          branch: 'changes',
        }),
      }),
      eventName: 'workflow_run',
    });
    const bundle = {
      schema: 'k6-distributed/report-bundle@1',
      repository: `${OWNER}/${REPO}`,
      prNumber: 1,
      headSha: HEAD_SHA,
      marker: { workflow: 'perf', job: 'load-test', key: 'default' },
      verdict: 'no-baseline',
      input: {
        head: makeResult(),
        baseline: {
          source: 'artifact',
          state: 'none',
          branch: 'master',
          artifactName: BASELINE,
          runsChecked: 0,
        },
        options: {
          key: 'default',
          gate: ['p95'],
          tolerances: parseReportInputs({ 'github-token': 'x' }).tolerances,
        },
        links: {},
      },
    };
    const other = { ...structuredClone(PR_PAYLOAD.pull_request), number: 1 };
    other.head.sha = 'f'.repeat(40);
    other.head.repo.full_name = `${OWNER}/${REPO}`;
    const scope = nock(API)
      .get(`${REPO_PATH}/actions/runs/9000/artifacts`)
      .query({ name: 'k6-distributed-report-default', per_page: '100' })
      .reply(200, artifacts([artifact(8102, 'k6-distributed-report-default', 9000)]));
    const blob = serveArtifact(scope, 8102, { 'report.json': JSON.stringify(bundle) });
    scope
      .get(`${REPO_PATH}/pulls/1`)
      .reply(200, other)
      .get(`${REPO_PATH}/commits/${HEAD_SHA}/pulls`)
      .query({ per_page: '100' })
      .reply(200, [{ ...PR_PAYLOAD.pull_request, number: 2, state: 'open' }])
      .get(COMMENTS)
      .query({ per_page: '100' })
      .reply(200, [])
      .post(COMMENTS)
      .reply(201, comment(91, 'x'));
    // The bundle's baseline ("none") is not used: the lookup asks main's runs.
    nockNoBaseline(scope);
    const outcome = await report(await inputs(makeResult()), deps);
    expect(outcome.outputs['comment-url']).toContain('/pull/2#issuecomment-91');
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });

  it("ignores a forged baseline, gate and tolerances in the bundle: main's baseline and this workflow's gate judge", async () => {
    const post = reportHarness(forkRunContext());
    const fork = structuredClone(PR_PAYLOAD);
    fork.pull_request.head.repo.full_name = 'mallory/Hello-World';
    const forgedTolerance = { relativePct: 1000, absolute: 1000 };
    // A fork that edited perf-pr.yml: a "main baseline" as fast as its head, linked to a real-looking
    // run of main, no gate, and tolerances of 1000%.
    const bundle = {
      schema: 'k6-distributed/report-bundle@1',
      prNumber: 2,
      headSha: HEAD_SHA,
      input: {
        head: makeResult({ p95: 35 }),
        base: makeResult({ p95: 35 }),
        baseline: {
          source: 'artifact',
          state: 'found',
          branch: 'master',
          artifactName: BASELINE,
          run: { id: 777, sha: MERGE_BASE, createdAt: '2026-01-09T10:00:00Z' },
        },
        options: {
          key: 'default',
          title: 'All good, merge it',
          gate: [],
          tolerances: Object.fromEntries(METRIC_IDS.map((m) => [m, forgedTolerance])),
        },
        links: {},
      },
    };
    const {
      scope,
      blob,
      posted: postedBody,
    } = serveForkBundlePost(fork.pull_request, {
      'report.json': JSON.stringify(bundle),
    });
    const base = nockBaseline(scope, makeResult()); // main's p95: 22ms
    const outcome = await report(await inputs(makeResult(), { mode: 'post-bundle' }), post.deps);
    const posted = postedBody();
    expect(outcome.outputs).toMatchObject({ verdict: 'regressed', 'baseline-run-id': '501' });
    expect(posted).toContain(
      '**🔴 Regressed** against `master` at 99% confidence: Latency p95 +13.00ms (+59.1%)',
    );
    expect(posted).toContain('| Latency p95 (gate) | 22.00ms | 35.00ms |');
    expect(posted).toContain(`[run 501](https://github.com/${OWNER}/${REPO}/actions/runs/501)`);
    expect(posted).not.toContain('777');
    expect(posted).not.toContain('All good');
    expect(posted).not.toContain('1000%');
    expect(posted).not.toContain('gate: none');
    expect(posted).toContain(forkNote(`https://github.com/${OWNER}/${REPO}/actions/runs/9000`));
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
    expect(base.isDone()).toBe(true);
  });

  it('refuses a bundle artifact over 5 MB before downloading it, and posts nothing', async () => {
    const { deps } = reportHarness(forkRunContext());
    const big = { ...artifact(8101, 'k6-distributed-report-default', 9000), size_in_bytes: 6 * 1024 * 1024 };
    // Only the listing: a download, a PR lookup or a comment would find no interceptor and fail.
    const scope = nockBundleListing([big]);
    await expect(report(await inputs(makeResult(), { mode: 'post-bundle' }), deps)).rejects.toThrow(
      'report bundle k6-distributed-report-default of run 9000 is 6291456 bytes, more than the 5242880 a bundle may have: not downloaded, nothing posted',
    );
    expect(scope.isDone()).toBe(true);
  });

  it('refuses a report.json over 20 MB unzipped before parsing it, and posts nothing', async () => {
    const { deps } = reportHarness(forkRunContext());
    const scope = nockBundleListing([artifact(8101, 'k6-distributed-report-default', 9000)]);
    const size = MAX_BUNDLE_JSON_BYTES + 1;
    const blob = serveArtifact(scope, 8101, { 'report.json': `"${'x'.repeat(size - 2)}"` });
    await expect(report(await inputs(makeResult(), { mode: 'post-bundle' }), deps)).rejects.toThrow(
      `report bundle k6-distributed-report-default of run 9000: report.json is ${size} bytes unzipped, more than the ${MAX_BUNDLE_JSON_BYTES} a bundle may have: not parsed, nothing posted`,
    );
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });

  it('warns when the run left no bundle', async () => {
    const { deps } = reportHarness({
      ...prContext({ action: 'completed', workflow_run: workflowRun(9000, HEAD_SHA) }),
      eventName: 'workflow_run',
    });
    const scope = nock(API)
      .get(`${REPO_PATH}/actions/runs/9000/artifacts`)
      .query({ name: 'k6-distributed-report-default', per_page: '100' })
      .reply(200, artifacts([]));
    const outcome = await report(await inputs(makeResult()), deps);
    expect(outcome.warnings).toEqual([
      'run 9000 has no report bundle k6-distributed-report-default: nothing to post (did its report step run with mode bundle and key default?)',
    ]);
    expect(outcome.outputs.verdict).toBe('');
    expect(scope.isDone()).toBe(true);
  });
});

describe('resolveMode (mode: auto)', () => {
  it('picks the mode from the event', () => {
    const fork = structuredClone(PR_PAYLOAD);
    fork.pull_request.head.repo.full_name = 'mallory/Hello-World';
    expect(resolveMode('auto', prContext())).toBe('comment');
    expect(resolveMode('auto', prContext(fork))).toBe('bundle');
    expect(resolveMode('auto', { ...prContext(fork), eventName: 'pull_request_target' })).toBe('comment');
    expect(resolveMode('auto', { ...prContext({}), eventName: 'push' })).toBe('store');
    expect(resolveMode('auto', { ...prContext({}), eventName: 'workflow_run' })).toBe('post-bundle');
    expect(resolveMode('store', prContext())).toBe('store');
  });
});
