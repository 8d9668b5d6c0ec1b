import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BASELINE_METADATA_FILE, RESULT_FILE } from '../../src/github/artifacts.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { baseBranchRoutes, type FakeGitHub, startFakeGitHub } from '../support/fake-github.ts';
import { MERGE_BASE, OWNER, REPO } from '../support/github.ts';
import { makeResult } from '../support/results.ts';
import { tempDir } from '../support/temp.ts';
import { zipStored } from '../support/zip.ts';

/**
 * The bundled action (dist/report.js) run the way the GitHub runner runs a node24 action: `node
 * <main>` with every input as INPUT_<NAME> (defaults from action.yml), the pull_request payload at
 * GITHUB_EVENT_PATH, and GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files. nock cannot reach into another
 * process, so GITHUB_API_URL points at a small fake GitHub on 127.0.0.1 that serves the REST shapes
 * (and the artifact zip behind the download redirect, which the real @actions/artifact fetches).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const ACTION_DIR = path.join(ROOT, 'actions/report');
const REPO_PATH = `/repos/${OWNER}/${REPO}`;

interface ActionYml {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, unknown>;
  runs: { using: string; main: string };
}

let github: FakeGitHub;
let action: ActionYml;

beforeAll(async () => {
  action = parse(await readFile(path.join(ACTION_DIR, 'action.yml'), 'utf8')) as ActionYml;
  const zip = zipStored({
    [RESULT_FILE]: JSON.stringify(makeResult()),
    [BASELINE_METADATA_FILE]: JSON.stringify({ schema: 'k6-distributed/baseline@1', sha: MERGE_BASE }),
  });
  github = await startFakeGitHub(
    baseBranchRoutes(
      () => 7001,
      () => zip,
    ),
  );
});

afterAll(async () => {
  await github?.close();
});

/** Parses a GITHUB_OUTPUT file (`name<<delimiter\nvalue\ndelimiter`). */
function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^(.+?)<<(ghadelimiter_[\w-]+)\n([\s\S]*?)\n\2$/gm)) out[m[1]!] = m[3]!;
  return out;
}

async function runAction(head: RunResult, inputs: Record<string, string> = {}) {
  const dir = tempDir('k6d-dist-report-');
  const files = {
    event: path.join(dir, 'event.json'),
    result: path.join(dir, 'k6-distributed-result.json'),
    output: path.join(dir, 'output'),
    summary: path.join(dir, 'summary.md'),
  };
  await writeFile(
    files.event,
    await readFile(path.join(import.meta.dirname, '../support/fixtures/pull_request.opened.json')),
  );
  await writeFile(files.result, JSON.stringify(head));
  await writeFile(files.output, '');
  await writeFile(files.summary, '');
  const given: Record<string, string> = { result: files.result, ...inputs };
  // The runner sets INPUT_<NAME> for every input, from the workflow or else action.yml's default.
  const inputEnv = Object.fromEntries(
    Object.entries(action.inputs).map(([name, spec]) => [
      `INPUT_${name.toUpperCase()}`,
      given[name] ?? (spec.default?.includes('github.token') ? 'ghs_workflowtoken' : (spec.default ?? '')),
    ]),
  );
  const env: NodeJS.ProcessEnv = {
    // A clean environment: nothing of the machine running the tests (or of a CI runner) leaks in.
    PATH: process.env.PATH,
    HOME: dir,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: files.event,
    GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
    GITHUB_REPOSITORY_OWNER: OWNER,
    GITHUB_RUN_ID: '9000',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_RUN_NUMBER: '12',
    GITHUB_WORKFLOW: 'perf',
    GITHUB_WORKFLOW_REF: `${OWNER}/${REPO}/.github/workflows/perf.yml@refs/pull/2/merge`,
    GITHUB_JOB: 'load-test',
    GITHUB_REF: 'refs/pull/2/merge',
    GITHUB_SHA: 'c0ffee0000000000000000000000000000000000',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: github.url,
    GITHUB_GRAPHQL_URL: `${github.url}/graphql`,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_WORKSPACE: dir,
    RUNNER_TEMP: dir,
    ...inputEnv,
  };
  const main = path.resolve(ACTION_DIR, action.runs.main);
  const child = spawn(process.execPath, [main], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    code,
    stdout,
    stderr,
    outputs: parseOutputs(await readFile(files.output, 'utf8')),
    summary: await readFile(files.summary, 'utf8'),
  };
}

describe('dist/report.js, run as GitHub runs a node24 action', () => {
  it('is the bundle action.yml names, for node24', () => {
    expect(action.runs).toEqual({ using: 'node24', main: '../../dist/report.js' });
  });

  it('comments on the pull request, fails on a regression, then updates the same comment', async () => {
    const first = await runAction(makeResult({ p95: 35 }));
    expect(first.code, first.stderr + first.stdout).toBe(1);
    // Workflow commands escape % and, in properties, ':' (@actions/core toCommandValue).
    expect(first.stdout).toContain(
      '::error::performance regressed against master: Latency p95 22.00ms -> 35.00ms (+13.00ms (+59.1%25))',
    );
    expect(first.stdout).toContain(
      '::error title=k6 regression%3A Latency p95::Latency p95 22.00ms -> 35.00ms',
    );
    expect(first.outputs).toEqual({
      mode: 'comment',
      verdict: 'regressed',
      'run-verdict': 'passed',
      regressions: expect.stringContaining('"metric":"p95"'),
      'baseline-sha': MERGE_BASE,
      'baseline-run-id': '501',
      'comment-url': `https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-100`,
      'artifact-id': '',
      // No junit-path input: the output is set, empty, as every declared output is.
      'junit-path': '',
    });
    expect(Object.keys(first.outputs).sort()).toEqual(Object.keys(action.outputs).sort());
    expect(github.comments).toHaveLength(1);
    const body = github.comments[0]!.body;
    expect(first.summary).toBe(body);
    expect(body).toContain('**🔴 Regressed** against `master` at 99% confidence');
    expect(body).toContain(
      `**Baseline:** [run 501](https://github.com/${OWNER}/${REPO}/actions/runs/501) on \`master\` at \`6dcb09b\`, the merge-base of this pull request.`,
    );
    expect(body).toContain(`[workflow run](https://github.com/${OWNER}/${REPO}/actions/runs/9000)`);
    expect(
      github.requests.every(
        (r) => r.path.startsWith('/blob/') || r.authorization === 'token ghs_workflowtoken',
      ),
    ).toBe(true);

    const second = await runAction(makeResult({ p95: 22.4 }));
    expect(second.code, second.stderr + second.stdout).toBe(0);
    expect(second.outputs.verdict).toBe('passed');
    expect(second.outputs['comment-url']).toBe(first.outputs['comment-url']);
    expect(github.comments).toHaveLength(1);
    expect(github.comments[0]!.body).toContain('**🟢 No regression** against `master` at 95% confidence');
    expect(second.summary).toBe(github.comments[0]!.body);
    expect(github.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST ${REPO_PATH}/issues/2/comments`,
      `PATCH ${REPO_PATH}/issues/comments/100`,
    ]);
    expect(github.unexpected).toEqual([]);
  });

  it('fails in one line that names the input when an input is wrong', async () => {
    const run = await runAction(makeResult(), { gate: 'p95, p97' });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      '::error::gate: unknown metric "p97"; use rps, p50, p90, p95, p99, error-rate, checks or none',
    );
  });
});
