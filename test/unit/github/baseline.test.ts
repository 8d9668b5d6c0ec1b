import { DefaultArtifactClient } from '@actions/artifact';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { BASELINE_METADATA_FILE, RESULT_FILE } from '../../../src/github/artifacts.ts';
import { type BaselineQuery, findBaseline, findHistory } from '../../../src/github/baseline.ts';
import {
  API,
  artifact,
  artifacts,
  BASE_SHA,
  BASELINE_RUNS,
  BASELINE_RUNS_QUERY,
  compare,
  HEAD_SHA,
  MERGE_BASE,
  nockBaseRuns,
  OWNER,
  REPO,
  REPO_PATH,
  serveArtifact,
  testGitHub,
  useNock,
  workflowRun,
  workflowRuns,
} from '../../support/github.ts';
import { makeResult } from '../../support/results.ts';
import { tempDir } from '../../support/temp.ts';

useNock();

const NAME = 'k6-distributed-baseline-default';
const RUNS = BASELINE_RUNS;
const runsQuery = BASELINE_RUNS_QUERY;
const mergeBaseQuery = { ...runsQuery, per_page: '10', head_sha: MERGE_BASE };
const artifactsQuery = { name: NAME, per_page: '100' };

async function query(): Promise<BaselineQuery> {
  return {
    owner: OWNER,
    repo: REPO,
    workflowId: 'perf.yml',
    branch: 'master',
    baseSha: BASE_SHA,
    headSha: HEAD_SHA,
    currentRunId: 9000,
    artifactName: NAME,
    token: 'ghs_test',
    dir: tempDir('k6d-baseline-test-'),
  };
}

const stored = (p95: number) => ({
  [RESULT_FILE]: JSON.stringify(makeResult({ p95 })),
  [BASELINE_METADATA_FILE]: JSON.stringify({
    schema: 'k6-distributed/baseline@1',
    key: 'default',
    sha: MERGE_BASE,
  }),
});

describe('finding the baseline of a pull request', () => {
  it('prefers the successful run at the merge-base, downloads its artifact and reads the result', async () => {
    const scope = nockBaseRuns(
      nock(API),
      {
        atMergeBase: [workflowRun(501, MERGE_BASE)],
        newest: [workflowRun(503, 'b'.repeat(40)), workflowRun(501, MERGE_BASE)],
      },
      { name: NAME, runs: { 501: [artifact(7001, NAME, 501)] } },
    );
    const blob = serveArtifact(scope, 7001, stored(19));
    const found = await findBaseline(testGitHub(), new DefaultArtifactClient(), await query());
    expect(found.info).toEqual({
      source: 'artifact',
      state: 'found',
      branch: 'master',
      artifactName: NAME,
      mergeBase: MERGE_BASE,
      atMergeBase: true,
      runsChecked: 1,
      run: {
        id: 501,
        sha: MERGE_BASE,
        url: `https://github.com/${OWNER}/${REPO}/actions/runs/501`,
        createdAt: '2026-01-09T10:00:00Z',
      },
    });
    expect(found.result!.metrics.http_req_duration!.values['p(95)']).toBe(19);
    expect(found.metadata).toMatchObject({ key: 'default', sha: MERGE_BASE });
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });

  it("falls back to the newest run, skipping this run and runs of a fork's branch of the same name", async () => {
    const newest = 'c'.repeat(40);
    const scope = nock(API)
      .get(`${REPO_PATH}/compare/${BASE_SHA}...${HEAD_SHA}`)
      .query({ per_page: '1' })
      .reply(200, compare(MERGE_BASE))
      .get(RUNS)
      .query(mergeBaseQuery)
      .reply(200, workflowRuns([]))
      .get(RUNS)
      .query(runsQuery)
      .reply(
        200,
        workflowRuns([
          workflowRun(9000, 'd'.repeat(40)),
          workflowRun(600, 'e'.repeat(40), { event: 'pull_request', headRepo: 'mallory/Hello-World' }),
          workflowRun(601, 'f'.repeat(40), { headRepo: 'mallory/Hello-World' }),
          workflowRun(503, newest),
        ]),
      )
      .get(`${REPO_PATH}/actions/runs/503/artifacts`)
      .query(artifactsQuery)
      .reply(200, artifacts([artifact(7003, NAME, 503, { headSha: newest })]));
    const blob = serveArtifact(scope, 7003, stored(21));
    const found = await findBaseline(testGitHub(), new DefaultArtifactClient(), await query());
    expect(found.info).toMatchObject({
      state: 'found',
      atMergeBase: false,
      mergeBase: MERGE_BASE,
      run: { id: 503, sha: newest },
    });
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });

  it('goes on without a merge-base when the compare call fails', async () => {
    const scope = nock(API)
      .get(`${REPO_PATH}/compare/${BASE_SHA}...${HEAD_SHA}`)
      .query({ per_page: '1' })
      .reply(404, {
        message: 'Not Found',
        documentation_url: 'https://docs.github.com/rest/commits/commits#compare-two-commits',
      })
      .get(RUNS)
      .query(runsQuery)
      .reply(200, workflowRuns([workflowRun(503, 'c'.repeat(40))]))
      .get(`${REPO_PATH}/actions/runs/503/artifacts`)
      .query(artifactsQuery)
      .reply(200, artifacts([]));
    const lines: string[] = [];
    const found = await findBaseline(testGitHub(), new DefaultArtifactClient(), await query(), (l) =>
      lines.push(l),
    );
    expect(found.info).toEqual({
      source: 'artifact',
      state: 'none',
      branch: 'master',
      artifactName: NAME,
      runsChecked: 1,
    });
    expect(lines[0]).toBe('baseline: no merge-base (compare answered 404); using the newest run');
    expect(scope.isDone()).toBe(true);
  });

  it('reports "no baseline yet" when no successful run stored a result', async () => {
    const scope = nockBaseRuns(
      nock(API),
      {
        atMergeBase: [],
        newest: [workflowRun(502, 'a'.repeat(40)), workflowRun(501, MERGE_BASE)],
      },
      { name: NAME, runs: { 502: [], 501: [] } },
    );
    const found = await findBaseline(testGitHub(), new DefaultArtifactClient(), await query());
    expect(found.info).toMatchObject({ state: 'none', runsChecked: 2 });
    expect(found.result).toBeUndefined();
    expect(scope.isDone()).toBe(true);
  });

  it('reports an expired artifact of the newest run as "baseline expired" and looks no further', async () => {
    const scope = nockBaseRuns(
      nock(API),
      {
        atMergeBase: [],
        newest: [workflowRun(502, 'a'.repeat(40)), workflowRun(501, MERGE_BASE)],
      },
      { name: NAME, runs: { 502: [artifact(7002, NAME, 502, { expired: true })] } },
    );
    const found = await findBaseline(testGitHub(), new DefaultArtifactClient(), await query());
    expect(found.info).toMatchObject({
      state: 'expired',
      run: { id: 502 },
      expiredAt: '2026-01-01T10:04:00Z',
      runsChecked: 1,
    });
    expect(scope.isDone()).toBe(true);
  });

  it('uses a newer run when the one at the merge-base has expired', async () => {
    const scope = nockBaseRuns(
      nock(API),
      {
        atMergeBase: [workflowRun(501, MERGE_BASE)],
        newest: [workflowRun(503, 'c'.repeat(40)), workflowRun(501, MERGE_BASE)],
      },
      {
        name: NAME,
        runs: { 501: [artifact(7001, NAME, 501, { expired: true })], 503: [artifact(7003, NAME, 503)] },
      },
    );
    const blob = serveArtifact(scope, 7003, stored(23));
    const found = await findBaseline(testGitHub(), new DefaultArtifactClient(), await query());
    expect(found.info).toMatchObject({
      state: 'found',
      run: { id: 503 },
      atMergeBase: false,
      runsChecked: 2,
    });
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });

  it('retries a 5xx on the runs list', async () => {
    const scope = nock(API)
      .get(`${REPO_PATH}/compare/${BASE_SHA}...${HEAD_SHA}`)
      .query({ per_page: '1' })
      .reply(200, compare(MERGE_BASE))
      .get(RUNS)
      .query(mergeBaseQuery)
      .reply(500, { message: 'Server Error' })
      .get(RUNS)
      .query(mergeBaseQuery)
      .reply(200, workflowRuns([]))
      .get(RUNS)
      .query(runsQuery)
      .reply(200, workflowRuns([]));
    expect((await findBaseline(testGitHub(), new DefaultArtifactClient(), await query())).info.state).toBe(
      'none',
    );
    expect(scope.isDone()).toBe(true);
  });
});

describe('reading the history of the base branch', () => {
  it('reads the newest runs oldest first, reuses the known baseline, and skips what it cannot read', async () => {
    const runs = [
      workflowRun(505, 'e'.repeat(40)),
      workflowRun(504, 'd'.repeat(40)),
      workflowRun(503, 'c'.repeat(40)),
    ];
    const newest = runs.map((r) => ({ id: r.id, sha: r.head_sha, url: r.html_url, createdAt: r.created_at }));
    const scope = nock(API)
      // A run whose artifacts cannot even be listed (the API answers 404): skipped, not an error.
      .get(`${REPO_PATH}/actions/runs/505/artifacts`)
      .query(artifactsQuery)
      .reply(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' })
      .get(`${REPO_PATH}/actions/runs/504/artifacts`)
      .query(artifactsQuery)
      .reply(200, artifacts([artifact(7004, NAME, 504)]));
    const blob = serveArtifact(scope, 7004, stored(30));
    const lines: string[] = [];
    const known = [{ runId: 503, result: makeResult({ p95: 20 }) }];
    const history = await findHistory(
      testGitHub(),
      new DefaultArtifactClient(),
      await query(),
      newest,
      5,
      known,
      (l) => lines.push(l),
    );
    expect(history.skipped).toBe(1);
    expect(history.runs.map((h) => [h.run.id, h.result.metrics.http_req_duration!.values['p(95)']])).toEqual([
      [503, 20],
      [504, 30],
    ]);
    expect(lines[0]).toMatch(/^history: run 505 skipped \(.*Not Found/);
    expect(scope.isDone()).toBe(true);
    expect(blob.isDone()).toBe(true);
  });
});
