import { readFileSync } from 'node:fs';
import path from 'node:path';
import nock from 'nock';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ActionContext } from '../../src/actions/report/context.ts';
import { createGitHub, type GitHub } from '../../src/github/client.ts';
import { zipStored } from './zip.ts';

/**
 * REST fixtures in the shapes GitHub returns (docs.github.com/en/rest, trimmed to the fields a
 * client reads plus their neighbours), and nock set-up: no real network, every interceptor used.
 */

/**
 * The REST base URL. @actions/artifact's download of another run's artifact makes its own client
 * from GITHUB_API_URL, so the tests mock the URL that client will use.
 */
export const API = process.env.GITHUB_API_URL || 'https://api.github.com';
export const OWNER = 'Codertocat';
export const REPO = 'Hello-World';
export const REPO_PATH = `/repos/${OWNER}/${REPO}`;

/** The `pull_request` `opened` webhook payload from octokit/webhooks (payload-examples/api.github.com). */
export const PR_PAYLOAD = JSON.parse(
  readFileSync(path.join(import.meta.dirname, 'fixtures/pull_request.opened.json'), 'utf8'),
) as {
  number: number;
  pull_request: { base: { ref: string; sha: string }; head: { sha: string; repo: { full_name: string } } };
};
export const BASE_SHA = PR_PAYLOAD.pull_request.base.sha;
export const HEAD_SHA = PR_PAYLOAD.pull_request.head.sha;
export const MERGE_BASE = '6dcb09b5b57875f334f61aebed695e2e4193db5e';

/** Disables the network for the file, and checks after each test that every interceptor was used. */
export function useNock(): void {
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    if (pending.length > 0) throw new Error(`unused interceptors: ${pending.join(', ')}`);
  });
  afterAll(() => nock.enableNetConnect());
}

/** A REST client with retries that wait 1 ms instead of seconds. */
export function testGitHub(): GitHub {
  return createGitHub('ghs_test', { baseUrl: API, retryAfterBaseValue: 1 });
}

/** The context of the `report` step in the PR run of the payload above. */
export function prContext(payload: Record<string, unknown> = PR_PAYLOAD): ActionContext {
  return {
    eventName: 'pull_request',
    payload,
    owner: OWNER,
    repo: REPO,
    workflowRunId: 9000,
    runAttempt: 1,
    serverUrl: 'https://github.com',
    apiUrl: API,
    workflow: 'perf',
    job: 'load-test',
    ref: 'refs/pull/2/merge',
    sha: 'c0ffee0000000000000000000000000000000000',
    workflowRef: `${OWNER}/${REPO}/.github/workflows/perf.yml@refs/pull/2/merge`,
  };
}

const GITHUB_ACTIONS_BOT = {
  login: 'github-actions[bot]',
  id: 41898282,
  node_id: 'MDM6Qm90NDE4OTgyODI=',
  avatar_url: 'https://avatars.githubusercontent.com/in/15368?v=4',
  url: 'https://api.github.com/users/github-actions%5Bbot%5D',
  html_url: 'https://github.com/apps/github-actions',
  type: 'Bot',
  site_admin: false,
};

/** An issue comment (REST "List issue comments"). */
export function comment(id: number, body: string, login = 'github-actions[bot]', issue = 2) {
  const user =
    login === 'github-actions[bot]'
      ? GITHUB_ACTIONS_BOT
      : { ...GITHUB_ACTIONS_BOT, login, id: 1000 + id, type: login.endsWith('[bot]') ? 'Bot' : 'User' };
  return {
    url: `https://api.github.com${REPO_PATH}/issues/comments/${id}`,
    html_url: `https://github.com/${OWNER}/${REPO}/pull/${issue}#issuecomment-${id}`,
    issue_url: `https://api.github.com${REPO_PATH}/issues/${issue}`,
    id,
    node_id: `IC_kwDO${id}`,
    user,
    created_at: '2026-01-10T08:00:00Z',
    updated_at: '2026-01-10T08:00:00Z',
    author_association: login === 'github-actions[bot]' ? 'NONE' : 'OWNER',
    body,
    reactions: { url: '', total_count: 0 },
    performed_via_github_app: null,
  };
}

/** A `Link` header for page `page` of `last` (REST pagination). */
export function linkHeader(pathname: string, page: number, last: number): Record<string, string> {
  const url = (p: number) => `<${API}${pathname}?per_page=100&page=${p}>`;
  const parts = [];
  if (page < last) parts.push(`${url(page + 1)}; rel="next"`, `${url(last)}; rel="last"`);
  if (page > 1) parts.push(`${url(1)}; rel="first"`, `${url(page - 1)}; rel="prev"`);
  return parts.length > 0 ? { link: parts.join(', ') } : {};
}

/** A workflow run (REST "List workflow runs for a workflow"). */
export function workflowRun(
  id: number,
  headSha: string,
  options: { event?: string; headRepo?: string; branch?: string } = {},
) {
  const repo = options.headRepo ?? `${OWNER}/${REPO}`;
  return {
    id,
    name: 'perf',
    node_id: `WFR_${id}`,
    head_branch: options.branch ?? 'master',
    head_sha: headSha,
    path: '.github/workflows/perf.yml',
    display_title: 'Update the README',
    run_number: id - 400,
    event: options.event ?? 'push',
    status: 'completed',
    conclusion: 'success',
    workflow_id: 161335,
    check_suite_id: 42,
    url: `https://api.github.com${REPO_PATH}/actions/runs/${id}`,
    html_url: `https://github.com/${OWNER}/${REPO}/actions/runs/${id}`,
    pull_requests: [],
    created_at: '2026-01-09T10:00:00Z',
    updated_at: '2026-01-09T10:05:00Z',
    run_attempt: 1,
    run_started_at: '2026-01-09T10:00:00Z',
    artifacts_url: `https://api.github.com${REPO_PATH}/actions/runs/${id}/artifacts`,
    head_repository: { id: 186853002, name: repo.split('/')[1], full_name: repo, private: false },
    repository: { id: 186853002, name: REPO, full_name: `${OWNER}/${REPO}`, private: false },
  };
}

/** The answer of "List workflow runs for a workflow". */
export function workflowRuns(runs: ReturnType<typeof workflowRun>[]) {
  return { total_count: runs.length, workflow_runs: runs };
}

/** An artifact (REST "List workflow run artifacts"). */
export function artifact(
  id: number,
  name: string,
  runId: number,
  options: { expired?: boolean; headSha?: string } = {},
) {
  return {
    id,
    node_id: `MDg6QXJ0aWZhY3Q${id}`,
    name,
    size_in_bytes: 4321,
    url: `https://api.github.com${REPO_PATH}/actions/artifacts/${id}`,
    archive_download_url: `https://api.github.com${REPO_PATH}/actions/artifacts/${id}/zip`,
    expired: options.expired ?? false,
    digest: 'sha256:0000',
    created_at: '2026-01-09T10:04:00Z',
    updated_at: '2026-01-09T10:04:00Z',
    expires_at: options.expired ? '2026-01-01T10:04:00Z' : '2026-04-09T10:04:00Z',
    workflow_run: {
      id: runId,
      repository_id: 186853002,
      head_repository_id: 186853002,
      head_branch: 'master',
      head_sha: options.headSha ?? MERGE_BASE,
    },
  };
}

/** The answer of "List workflow run artifacts". */
export function artifacts(list: ReturnType<typeof artifact>[]) {
  return { total_count: list.length, artifacts: list };
}

/** The answer of "Compare two commits" (no commits or files listed: per_page=1 and a trimmed body). */
export function compare(mergeBase: string) {
  const commit = (sha: string) => ({
    sha,
    node_id: `C_${sha.slice(0, 8)}`,
    url: `https://api.github.com${REPO_PATH}/commits/${sha}`,
    html_url: `https://github.com/${OWNER}/${REPO}/commit/${sha}`,
    commit: {
      message: 'a commit',
      author: { name: 'Monalisa Octocat', email: 'mona@github.com', date: '2026-01-09T09:00:00Z' },
    },
    parents: [],
  });
  return {
    url: `https://api.github.com${REPO_PATH}/compare/${BASE_SHA}...${HEAD_SHA}`,
    html_url: `https://github.com/${OWNER}/${REPO}/compare/${BASE_SHA}...${HEAD_SHA}`,
    permalink_url: `https://github.com/${OWNER}/${REPO}/compare/${OWNER}:${BASE_SHA.slice(0, 7)}...${OWNER}:${HEAD_SHA.slice(0, 7)}`,
    base_commit: commit(BASE_SHA),
    merge_base_commit: commit(mergeBase),
    status: 'diverged',
    ahead_by: 1,
    behind_by: 2,
    total_commits: 1,
    commits: [commit(HEAD_SHA)],
    files: [],
  };
}

/** The body of a 403 for a read-only token (a fork's pull request). */
export const FORBIDDEN = {
  message: 'Resource not accessible by integration',
  documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
  status: '403',
};

const BLOB = 'https://productionresultssa0.blob.core.windows.net';

/**
 * The REST "Download an artifact" redirect (302 to blob storage) on `scope`, and the blob behind
 * it, a zip as GitHub serves artifacts; the real @actions/artifact client follows and unpacks it.
 * @returns the blob storage scope.
 */
export function serveArtifact(scope: nock.Scope, id: number, files: Record<string, string>): nock.Scope {
  scope
    .get(`${REPO_PATH}/actions/artifacts/${id}/zip`)
    .reply(302, '', { location: `${BLOB}/actions-results/run/${id}.zip?sig=secret&se=2026-01-10` });
  return nock(BLOB)
    .get(`/actions-results/run/${id}.zip`)
    .query(true)
    .reply(200, zipStored(files), { 'content-type': 'application/zip' });
}

/** The runs of the workflow perf.yml, where the baseline lookup looks for the base branch's runs. */
export const BASELINE_RUNS = `${REPO_PATH}/actions/workflows/perf.yml/runs`;
/** The query of the base branch's newest successful runs. */
export const BASELINE_RUNS_QUERY = {
  branch: 'master',
  status: 'success',
  exclude_pull_requests: 'true',
  per_page: '20',
};

/**
 * The first requests of the baseline lookup for the PR in the payload: the merge-base of base and
 * head, the base branch's successful runs at the merge-base, then its newest successful runs.
 */
export function nockBaseRuns(
  scope: nock.Scope,
  runs: { atMergeBase: ReturnType<typeof workflowRun>[]; newest: ReturnType<typeof workflowRun>[] },
  artifactsOf?: { name: string; runs: Record<number, ReturnType<typeof artifact>[]> },
): nock.Scope {
  // Each listed run's artifacts named `artifactsOf.name` (REST "List workflow run artifacts").
  for (const [id, list] of Object.entries(artifactsOf?.runs ?? {}))
    scope
      .get(`${REPO_PATH}/actions/runs/${id}/artifacts`)
      .query({ name: artifactsOf!.name, per_page: '100' })
      .reply(200, artifacts(list));
  return scope
    .get(`${REPO_PATH}/compare/${BASE_SHA}...${HEAD_SHA}`)
    .query({ per_page: '1' })
    .reply(200, compare(MERGE_BASE))
    .get(BASELINE_RUNS)
    .query({ ...BASELINE_RUNS_QUERY, per_page: '10', head_sha: MERGE_BASE })
    .reply(200, workflowRuns(runs.atMergeBase))
    .get(BASELINE_RUNS)
    .query(BASELINE_RUNS_QUERY)
    .reply(200, workflowRuns(runs.newest));
}

/**
 * No sticky comment on pull request 2 yet: lists none, then expects the new one (REST "Create an
 * issue comment"), answered with comment `id`.
 * @returns the posted body, once posted.
 */
export function nockNewComment(scope: nock.Scope, id: number): () => string {
  const comments = `${REPO_PATH}/issues/2/comments`;
  let posted = '';
  scope
    .get(comments)
    .query({ per_page: '100' })
    .reply(200, [])
    .post(comments, (b: { body: string }) => {
      posted = b.body;
      return true;
    })
    .reply(201, comment(id, 'x'));
  return () => posted;
}

/** The context of a `post-bundle` step (job `comment`) after the fork's run 9000 of pull request #2. */
export function forkRunContext(extra: Partial<ActionContext> = {}): ActionContext {
  const wr = workflowRun(9000, HEAD_SHA, {
    event: 'pull_request',
    headRepo: 'mallory/Hello-World',
    branch: 'changes',
  });
  return {
    ...prContext({ action: 'completed', workflow_run: wr }),
    eventName: 'workflow_run',
    job: 'comment',
    ...extra,
  };
}

/** Run 9000's report bundle artifacts of key `default`, as listed: `list`. */
export function nockBundleListing(list: ReturnType<typeof artifact>[]): nock.Scope {
  return nock(API)
    .get(`${REPO_PATH}/actions/runs/9000/artifacts`)
    .query({ name: 'k6-distributed-report-default', per_page: '100' })
    .reply(200, artifacts(list));
}

/**
 * The REST calls of `post-bundle` for a fork's pull request #2: the report bundle artifact 8101 of
 * the fork's run 9000 (holding `files`), the pull request (open), no comment yet, and the new
 * comment (id 90), whose body is captured.
 * @param pullRequest the fork's `pull_request` payload.
 * @returns the API scope, the blob scope, and the posted body once posted.
 */
export function serveForkBundlePost(pullRequest: object, files: Record<string, string>) {
  const scope = nockBundleListing([artifact(8101, 'k6-distributed-report-default', 9000)]);
  const blob = serveArtifact(scope, 8101, files);
  scope.get(`${REPO_PATH}/pulls/2`).reply(200, { ...pullRequest, number: 2, state: 'open' });
  const posted = nockNewComment(scope, 90);
  return { scope, blob, posted };
}
