import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import type { ActionContext } from '../../../../src/actions/report/context.ts';
import { parseReportInputs } from '../../../../src/actions/report/inputs.ts';
import { report } from '../../../../src/actions/report/report.ts';
import { reportScripts, type ScriptToReport } from '../../../../src/actions/report/scripts.ts';
import { BASELINE_METADATA_FILE, RESULT_FILE } from '../../../../src/github/artifacts.ts';
import { COMMENT_LIMIT } from '../../../../src/pr-comment/fit.ts';
import { overallVerdict } from '../../../../src/pr-comment/scripts.ts';
import { forkNote } from '../../../../src/pr-comment/sections.ts';
import type { RunResult } from '../../../../src/result/schema.ts';
import {
  API,
  artifact,
  artifacts,
  comment,
  forkRunContext,
  MERGE_BASE,
  nockBaseRuns,
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
} from '../../../support/github.ts';
import { makeResult } from '../../../support/results.ts';
import { tempDir } from '../../../support/temp.ts';
import { reportHarness } from './support/harness.ts';

// The report of several scripts in one step (the root action with a glob in `script`): each
// script compared with its own baseline, stored under its own artifact, and ONE sticky comment.
// REST in GitHub's shapes through nock; downloads through the real @actions/artifact client.

useNock();

const COMMENTS = `${REPO_PATH}/issues/2/comments`;
const MARKER = '<!-- k6-distributed:report workflow=perf job=load-test key=default -->';

/** Writes each script's result where the run writes it (`k6-distributed-result-<script>.json`). */
async function scriptResults(results: Record<string, RunResult | string>): Promise<ScriptToReport[]> {
  const dir = tempDir('k6d-scripts-');
  const out: ScriptToReport[] = [];
  for (const [script, result] of Object.entries(results)) {
    const resultPath = path.join(dir, `k6-distributed-result-${script.replace(/\//g, '-')}.json`);
    if (typeof result === 'string') out.push({ script, resultPath, error: result });
    else {
      await writeFile(resultPath, JSON.stringify(result));
      out.push({ script, resultPath });
    }
  }
  return out;
}

const inputs = (extra: Record<string, string> = {}) =>
  parseReportInputs({ 'github-token': 'ghs_test', ...extra });

/** The baseline lookup of one script: run 501 at the merge-base stored `base` under `name`. */
function nockScriptBaseline(scope: nock.Scope, name: string, id: number, base: RunResult): nock.Scope {
  nockBaseRuns(scope, { atMergeBase: [workflowRun(501, MERGE_BASE)], newest: [workflowRun(501, MERGE_BASE)] })
    .get(`${REPO_PATH}/actions/runs/501/artifacts`)
    .query({ name, per_page: '100' })
    .reply(200, artifacts([artifact(id, name, 501)]));
  return serveArtifact(scope, id, {
    [RESULT_FILE]: JSON.stringify(base),
    [BASELINE_METADATA_FILE]: JSON.stringify({ schema: 'k6-distributed/baseline@1', sha: MERGE_BASE }),
  });
}

describe('mode comment with two scripts', () => {
  it('compares each with its own baseline and posts one comment with a section per script', async () => {
    const { deps, summaries } = reportHarness();
    const scope = nock(API);
    // The same numbers for both heads: only the baselines differ, so each must be its own.
    const blobs = [
      nockScriptBaseline(scope, 'k6-distributed-baseline-default-load-api.js', 7001, makeResult({ p95: 35 })),
      nockScriptBaseline(
        scope,
        'k6-distributed-baseline-default-load-checkout.js',
        7002,
        makeResult({ p95: 22 }),
      ),
    ];
    let posted = '';
    scope
      .get(COMMENTS)
      .query({ per_page: '100' })
      .reply(200, [comment(41, `${MARKER}\nthe report of one script, before`)])
      .patch(`${REPO_PATH}/issues/comments/41`, (b: { body: string }) => {
        posted = b.body;
        return true;
      })
      .reply(200, comment(41, 'x'));
    const scripts = await scriptResults({
      'load/api.js': makeResult({ p95: 35 }),
      'load/checkout.js': makeResult({ p95: 35 }),
    });
    const outcome = await reportScripts(inputs(), deps, scripts);

    expect(outcome.outputs).toMatchObject({
      mode: 'comment',
      verdict: 'regressed',
      'run-verdict': 'passed',
      'baseline-sha': MERGE_BASE,
      'baseline-run-id': '501',
      'comment-url': `https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-41`,
    });
    expect(
      (JSON.parse(outcome.outputs.regressions) as Array<{ script: string; metric: string }>).map((r) => [
        r.script,
        r.metric,
      ]),
    ).toEqual([['load/checkout.js', 'p95']]);
    expect(outcome.failure).toBe(
      'load/checkout.js: performance regressed against master: Latency p95 22.00ms -> 35.00ms (+13.00ms (+59.1%))',
    );
    expect(outcome.annotations.map((a) => [a.level, a.title])).toEqual([
      ['error', 'k6 regression: Latency p95 (load/checkout.js)'],
    ]);
    // One comment: the sticky comment of the key, updated in place; the summary is the same report.
    expect(posted.startsWith(`${MARKER}\n## k6 load test · 2 scripts`)).toBe(true);
    expect(posted.match(/<!--/g)).toHaveLength(1);
    expect(posted).toContain('**🔴 Regressed** in 1 of 2 scripts.');
    expect(posted).toContain('| `load/api.js` | 🟢 No regression | ✅ passed |');
    expect(posted).toContain('| `load/checkout.js` | 🔴 Regressed | ✅ passed |');
    // Each script's own report under its path (escaped as markdown: `load/api.js` shows as is).
    const api = posted.indexOf('### load/api.js');
    const checkout = posted.indexOf('### load/checkout.js');
    expect(api).toBeGreaterThan(0);
    expect(checkout).toBeGreaterThan(api);
    expect(posted.slice(api, checkout)).toContain('| Latency p95 (gate) | 35.00ms | 35.00ms |');
    expect(posted.slice(checkout)).toContain('| Latency p95 (gate) | 22.00ms | 35.00ms |');
    // One footer, with the step's key.
    expect(posted.match(/<sub>k6-distributed · /g)).toHaveLength(1);
    expect(posted).toContain('key `default`');
    expect(summaries).toEqual([posted]);
    expect(scope.isDone()).toBe(true);
    for (const b of blobs) expect(b.isDone()).toBe(true);
  });

  it('lists a script without a result, and fits many scripts into one comment', async () => {
    const { deps } = reportHarness();
    const scope = nock(API);
    const names = Array.from({ length: 12 }, (_, i) => `load/service-${i}.js`);
    // Each result with 400 thresholds: the full report of twelve scripts is far beyond 65,536 characters.
    const big = makeResult({ p95: 22 }, {});
    big.thresholds = Array.from({ length: 400 }, (_, i) => ({
      metric: `http_req_duration{name:endpoint-${i}}`,
      expression: 'p(95)<500',
      ok: true,
      observed: 22,
      abortOnFail: false,
    }));
    const blobs = names.map((n, i) =>
      nockScriptBaseline(scope, `k6-distributed-baseline-default-${n.replace('/', '-')}`, 7100 + i, big),
    );
    const postedBody = nockNewComment(scope, 42);
    const scripts = await scriptResults({
      ...Object.fromEntries(names.map((n) => [n, big])),
      'load/broken.js': 'preflight: k6 archive failed: SyntaxError',
    });
    const outcome = await reportScripts(inputs(), deps, scripts);
    const posted = postedBody();
    expect(outcome.outputs.verdict).toBe('passed');
    expect(outcome.outputs['run-verdict']).toBe('failed');
    expect(outcome.failure).toBeUndefined();
    expect(posted.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(posted).toContain(
      '| `load/broken.js` | — | ❌ no result: preflight: k6 archive failed: SyntaxError |',
    );
    expect(posted).toContain("Left out to fit GitHub's size limit");
    // Every script keeps its section and its verdict; their thresholds tables shrink alike.
    const sections = posted.split(/^### load\/service\\-\d+\.js$/m).slice(1);
    expect(sections).toHaveLength(12);
    const shown = sections.map((t) => (t.match(/\| `http_req_duration\{name:endpoint-/g) ?? []).length);
    expect(Math.min(...shown)).toBeGreaterThan(10);
    expect(Math.max(...shown) - Math.min(...shown)).toBeLessThanOrEqual(2);
    expect(posted).toContain('· 13 scripts');
    for (const b of blobs) expect(b.isDone()).toBe(true);
  });
});

describe('mode store with two scripts', () => {
  it('stores each result as its own baseline artifact, with one job summary', async () => {
    const push: ActionContext = {
      ...prContext({}),
      eventName: 'push',
      ref: 'refs/heads/master',
    };
    const { deps, uploads, summaries } = reportHarness(push);
    const scripts = await scriptResults({
      'load/api.js': makeResult({ p95: 20 }),
      'load/checkout.js': makeResult({ p95: 30, verdict: 'failed' }),
    });
    const outcome = await reportScripts(inputs(), deps, scripts);
    expect(outcome.outputs).toMatchObject({
      mode: 'store',
      verdict: 'stored',
      'run-verdict': 'failed',
      'artifact-id': '8001,8002',
    });
    expect(uploads.map((u) => u.name)).toEqual([
      'k6-distributed-baseline-default-load-api.js',
      'k6-distributed-baseline-default-load-checkout.js',
    ]);
    const stored = uploads.map((u) => JSON.parse(u.files[RESULT_FILE]!) as RunResult);
    expect(stored.map((r) => r.metrics['http_req_duration']!.values['p(95)'])).toEqual([20, 30]);
    expect(JSON.parse(uploads[0]!.files[BASELINE_METADATA_FILE]!)).toMatchObject({
      key: 'default-load-api.js',
      ref: 'refs/heads/master',
    });
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatch(/^# k6 distributed: 2 scripts\n/);
    expect(summaries[0]).toContain('k6 load test · load/api.js');
    expect(summaries[0]).toContain('k6 load test · load/checkout.js');
    expect(summaries[0]).toContain('(artifact `k6-distributed-baseline-default-load-checkout.js`)');
  });
});

describe('the overall verdict of several scripts', () => {
  it('is the worst: regressed over everything, passed only when all passed', () => {
    expect(overallVerdict(['passed', 'regressed', 'no-baseline'])).toBe('regressed');
    expect(overallVerdict(['passed', 'passed'])).toBe('passed');
    expect(overallVerdict(['passed', 'no-baseline'])).toBe('no-baseline');
    expect(overallVerdict(['no-baseline', 'environment-changed'])).toBe('environment-changed');
    expect(() => overallVerdict([])).toThrow('no script has a result to judge');
  });
});

describe('a fork pull request with two scripts: bundle, then post-bundle', () => {
  it('bundles every script, and the workflow_run posts one comment rendered again from their data', async () => {
    const fork = structuredClone(PR_PAYLOAD);
    fork.pull_request.head.repo.full_name = 'mallory/Hello-World';
    const pr = reportHarness(prContext(fork));
    const scope = nock(API);
    const blobs = [
      nockScriptBaseline(scope, 'k6-distributed-baseline-default-load-api.js', 7001, makeResult({ p95: 35 })),
      nockScriptBaseline(
        scope,
        'k6-distributed-baseline-default-load-checkout.js',
        7002,
        makeResult({ p95: 22 }),
      ),
    ];
    const scripts = await scriptResults({
      'load/api.js': makeResult({ p95: 35 }),
      'load/checkout.js': makeResult({ p95: 35 }),
      'load/broken.js': 'preflight: k6 archive failed',
    });
    const outcome = await reportScripts(inputs(), pr.deps, scripts);
    expect(outcome.outputs).toMatchObject({ mode: 'bundle', verdict: 'regressed', 'artifact-id': '8001' });
    expect(outcome.failure).toMatch(/^load\/checkout\.js: performance regressed against master/);
    expect(pr.uploads.map((u) => u.name)).toEqual(['k6-distributed-report-default']);
    const bundle = JSON.parse(pr.uploads[0]!.files['report.json']!);
    expect(bundle.scripts.map((s: { script: string }) => s.script)).toEqual([
      'load/api.js',
      'load/checkout.js',
    ]);
    expect(bundle.errors).toEqual([{ script: 'load/broken.js', error: 'preflight: k6 archive failed' }]);
    for (const b of blobs) expect(b.isDone()).toBe(true);

    // The fork could have written anything into the bundle: its links are not used.
    bundle.scripts[1].input.links.runUrl = 'https://evil.example/phish';
    const post = reportHarness(forkRunContext({ workflowRunId: 9100 }));
    const {
      scope: scope2,
      blob: blob2,
      posted: postedBody,
    } = serveForkBundlePost(fork.pull_request, {
      'report.json': JSON.stringify(bundle),
      'report.md': 'not this',
    });
    // Each script's baseline is read again here, from the base branch's artifacts, not the bundle.
    const blobs2 = [
      nockScriptBaseline(
        scope2,
        'k6-distributed-baseline-default-load-api.js',
        7001,
        makeResult({ p95: 35 }),
      ),
      nockScriptBaseline(
        scope2,
        'k6-distributed-baseline-default-load-checkout.js',
        7002,
        makeResult({ p95: 22 }),
      ),
    ];
    const outcome2 = await report(inputs({ mode: 'post-bundle' }), post.deps);
    const posted = postedBody();
    expect(outcome2.failure).toBeUndefined(); // the PR run's own check fails, not this one
    expect(outcome2.outputs).toMatchObject({
      mode: 'post-bundle',
      verdict: 'regressed',
      'run-verdict': 'failed',
      'comment-url': `https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-90`,
    });
    expect(JSON.parse(outcome2.outputs.regressions)[0]).toMatchObject({
      script: 'load/checkout.js',
      metric: 'p95',
    });
    expect(
      posted.startsWith(
        '<!-- k6-distributed:report workflow=perf job=comment key=default -->\n## k6 load test · 3 scripts',
      ),
    ).toBe(true);
    expect(posted).toContain('| `load/checkout.js` | 🔴 Regressed | ✅ passed |');
    expect(posted).toContain('| `load/broken.js` | — | ❌ no result: preflight: k6 archive failed |');
    expect(posted).not.toContain('evil.example');
    expect(posted).not.toContain('not this');
    // Each script's section says its figures are the fork's run's.
    const note = forkNote(`https://github.com/${OWNER}/${REPO}/actions/runs/9000`);
    expect(posted.split(note).length - 1).toBe(2);
    // The same report as the PR run's job summary, but for the marker line and those notes.
    const trusted = posted.replaceAll(`\n\n${note}`, '');
    expect(trusted.slice(trusted.indexOf('\n'))).toBe(pr.summaries[0]!.slice(pr.summaries[0]!.indexOf('\n')));
    expect(scope2.isDone()).toBe(true);
    expect(blob2.isDone()).toBe(true);
    for (const b of blobs2) expect(b.isDone()).toBe(true);
  });
});
