import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DefaultArtifactClient } from '@actions/artifact';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import type { ActionContext } from '../../../../src/actions/report/context.ts';
import { parseReportInputs } from '../../../../src/actions/report/inputs.ts';
import type { ReportDeps } from '../../../../src/actions/report/outcome.ts';
import { report } from '../../../../src/actions/report/report.ts';
import { RESULT_FILE } from '../../../../src/github/artifacts.ts';
import type { RunResult } from '../../../../src/result/schema.ts';
import * as github from '../../../support/github.ts';
import { makeResult } from '../../../support/results.ts';
import { tempDir } from '../../../support/temp.ts';

// The report action with `history-branch`: mode store pushes each run's entry to a real git
// repository (a bare one in a temp folder, reached as `<serverUrl>/<owner>/<repo>.git`), and mode
// comment reads it back when the result artifacts have expired (REST through nock).

github.useNock();

const BASELINE = 'k6-distributed-baseline-default';
const BRANCH = 'perf-history';
/** p95 of the base branch's runs 500–506 (501 is the baseline, stored as an artifact too). */
const P95: Record<number, number> = { 500: 20, 501: 22, 502: 21, 503: 26, 504: 20, 505: 25, 506: 22 };

/** A server whose repository Codertocat/Hello-World is a bare repository on disk. */
function gitServer(): { serverUrl: string; repo: string } {
  const root = tempDir('k6d-server-');
  const repo = path.join(root, github.OWNER, `${github.REPO}.git`);
  mkdirSync(path.dirname(repo), { recursive: true });
  execFileSync('git', ['init', '-q', '--bare', repo]);
  return { serverUrl: `file://${root}`, repo };
}

function sha(id: number): string {
  return id === 501 ? github.MERGE_BASE : String(id).repeat(14).slice(0, 40);
}

/** The base branch's result of run `id`, started `id - 500` minutes after 10:00. */
function baseResult(id: number): RunResult {
  return makeResult(
    { p95: P95[id]! },
    { startedAt: new Date(Date.UTC(2026, 0, 9, 10, id - 500)).toISOString() },
  );
}

function deps(ctx: ActionContext): { deps: ReportDeps; logs: string[] } {
  const logs: string[] = [];
  return {
    logs,
    deps: {
      gh: github.testGitHub(),
      transfer: {
        uploadArtifact: async () => ({ id: 8001, size: 10 }),
        // Another run's artifact: the real client, through nock (REST redirect + blob).
        downloadArtifact: (id, options) => new DefaultArtifactClient().downloadArtifact(id, options),
      },
      token: 'ghs_test',
      ctx,
      log: (l) => logs.push(l),
      writeSummary: async () => {},
      tempDir: async (prefix) => tempDir(prefix),
    },
  };
}

async function inputs(result: RunResult, extra: Record<string, string>) {
  const file = path.join(tempDir('k6d-result-'), 'k6-distributed-result.json');
  writeFileSync(file, JSON.stringify(result));
  return parseReportInputs({ 'github-token': 'ghs_test', result: file, 'history-branch': BRANCH, ...extra });
}

/** Mode store on a push to master by workflow run `id`. */
async function storeRun(serverUrl: string, id: number, extra: Record<string, string> = {}) {
  const ctx: ActionContext = {
    ...github.prContext(),
    eventName: 'push',
    payload: {},
    ref: 'refs/heads/master',
    sha: sha(id),
    workflowRunId: id,
    serverUrl,
  };
  const d = deps(ctx);
  const outcome = await report(await inputs(baseResult(id), extra), d.deps);
  return { outcome, logs: d.logs };
}

/** The comment lookup of the PR: run 501 at the merge-base is the baseline, its artifact present. */
function nockBaselineRuns(scope: nock.Scope): nock.Scope {
  const newest = [506, 505, 504, 503, 502, 501, 500].map((id) => github.workflowRun(id, sha(id)));
  github
    .nockBaseRuns(scope, { atMergeBase: [github.workflowRun(501, github.MERGE_BASE)], newest })
    .get(`${github.REPO_PATH}/actions/runs/501/artifacts`)
    .query({ name: BASELINE, per_page: '100' })
    .reply(200, github.artifacts([github.artifact(7001, BASELINE, 501)]));
  return github.serveArtifact(scope, 7001, { [RESULT_FILE]: JSON.stringify(baseResult(501)) });
}

function files(repo: string): string[] {
  return execFileSync('git', ['-C', repo, 'ls-tree', '-r', '--name-only', BRANCH], { encoding: 'utf8' })
    .trim()
    .split('\n');
}

describe('report with history-branch', () => {
  it('mode store pushes one entry per run and the trend page; pruning keeps history-max-runs', async () => {
    const { serverUrl, repo } = gitServer();
    for (const id of [500, 501, 502]) {
      const { outcome, logs } = await storeRun(serverUrl, id, { 'history-max-runs': '2' });
      expect(outcome.warnings).toEqual([]);
      expect(logs.at(-1)).toMatch(
        /^history: default\/runs\/2026-01-09T10-0\d-00Z-50\d-1\.json pushed to perf-history/,
      );
    }
    expect(files(repo)).toEqual([
      '.nojekyll',
      'default/runs/2026-01-09T10-01-00Z-501-1.json',
      'default/runs/2026-01-09T10-02-00Z-502-1.json',
      'index.html',
    ]);
    const page = execFileSync('git', ['-C', repo, 'show', `${BRANCH}:index.html`], { encoding: 'utf8' });
    expect(page).toContain('<tr data-run="502">');
    expect(page).toContain(`${serverUrl}/${github.OWNER}/${github.REPO}/actions/runs/501`);
  });

  it('mode store on a pull request writes nothing and says why', async () => {
    const { serverUrl, repo } = gitServer();
    const { deps: d } = deps({ ...github.prContext(), serverUrl });
    const outcome = await report(await inputs(baseResult(501), { mode: 'store' }), d);
    expect(outcome.warnings).toEqual([
      'history-branch: not written from pull_request on refs/pull/2/merge: only a run on a branch (push, schedule, workflow_dispatch) adds to the history',
    ]);
    expect(execFileSync('git', ['-C', repo, 'branch', '--list'], { encoding: 'utf8' })).toBe('');
  });

  it('a store that cannot push is a warning naming the branch and the permission; the artifact is stored', async () => {
    const { outcome } = await storeRun('file:///nonexistent-k6d-server', 501);
    expect(outcome.outputs.verdict).toBe('stored');
    expect(outcome.warnings).toHaveLength(1);
    expect(outcome.warnings[0]).toMatch(
      /^history-branch: could not write perf-history \(the token needs contents: write\): git ls-remote: [^\n]+$/,
    );
  });

  it('mode comment: the artifacts of the history expired, the branch fills them in and its spread judges', async () => {
    const { serverUrl } = gitServer();
    for (const id of [500, 501, 502, 503, 504, 505, 506]) await storeRun(serverUrl, id);
    const judge = async (extra: Record<string, string>) => {
      const scope = nock(github.API);
      const blob = nockBaselineRuns(scope);
      for (const id of [506, 505, 504, 503, 502, 500])
        scope
          .get(`${github.REPO_PATH}/actions/runs/${id}/artifacts`)
          .query({ name: BASELINE, per_page: '100' })
          .reply(200, github.artifacts([github.artifact(id + 6500, BASELINE, id, { expired: true })]));
      const posted = github.nockNewComment(scope, 78);
      const d = deps({ ...github.prContext(), serverUrl });
      // +22.7% and +5 ms on the baseline run: a regression against the default between-run noise,
      // inconclusive against the history's spread (1.4826 × MAD = 2.97 ms): one run cannot tell.
      const outcome = await report(
        await inputs(makeResult({ p95: 27 }), { 'history-runs': '5', ...extra }),
        d.deps,
      );
      expect(scope.isDone()).toBe(true);
      expect(blob.isDone()).toBe(true);
      return { outcome, posted: posted(), logs: d.logs };
    };
    // Without the branch: one run of history, the fixed rule, a regression.
    const without = await judge({ 'history-branch': '' });
    expect(without.outcome.outputs.verdict).toBe('regressed');
    expect(without.posted).toContain('6 runs skipped: result artifact missing or expired.');

    const { outcome, posted, logs } = await judge({});
    expect(logs).toContain('history: 1 of 5 runs read, 6 skipped');
    expect(logs).toContain('history: 7 runs of default on master in perf-history; 5 used');
    expect(outcome.outputs.verdict).toBe('inconclusive');
    expect(outcome.failure).toBeUndefined();
    expect(posted).toContain('5 runs read from the history branch `perf-history`.');
    expect(posted).not.toContain('skipped');
    expect(posted).toContain(
      "**Latency p95** +22.7% against the history's median 22.00ms; against the baseline run +5.00ms (+22.7%): 🟠 inconclusive",
    );
    // Oldest first, this PR last: the branch's newest five.
    expect(posted).toContain(
      'x-axis "commit" ["5025025", "5035035", "5045045", "5055055", "5065065", "this PR"]',
    );
  });

  it('mode comment with history-branch-read: always reads the history from the branch alone', async () => {
    const { serverUrl } = gitServer();
    for (const id of [502, 503, 504, 505, 506]) await storeRun(serverUrl, id);
    const scope = nock(github.API);
    const blob = nockBaselineRuns(scope);
    const posted = github.nockNewComment(scope, 79);
    const d = deps({ ...github.prContext(), serverUrl });
    const input = await inputs(makeResult({ p95: 27 }), {
      'history-runs': '6',
      'history-branch-read': 'always',
    });
    const outcome = await report(input, d.deps);
    expect(outcome.outputs.verdict).toBe('inconclusive');
    expect(d.logs).toContain('history: 5 runs of default on master in perf-history; 5 used');
    expect(posted()).toContain('(spread of 6 base-branch runs)');
    expect(posted()).toContain(
      'x-axis "commit" ["6dcb09b", "5025025", "5035035", "5045045", "5055055", "5065065", "this PR"]',
    );
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });
});
