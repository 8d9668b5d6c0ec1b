import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptOutcome } from '../../src/actions/run/runner.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { BASELINE_METADATA_FILE, RESULT_FILE } from '../../src/github/artifacts.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { readAction } from '../docs/support/actions.ts';
import { type ActionStep, runAction } from '../support/action.ts';
import { ROOT, tempDir } from '../support/cli.ts';
import { baseBranchRoutes, type FakeGitHub, startFakeGitHub } from '../support/fake-github.ts';
import { MERGE_BASE, OWNER, REPO } from '../support/github.ts';
import { zipStored } from '../support/zip.ts';

// The root action (dist/main.js, as GitHub runs it) with two scripts on a pull request: real k6
// with the local backend against a real target on 127.0.0.1, then the report against a small fake
// GitHub on 127.0.0.1 (another process: nock cannot reach it) that serves each script's baseline
// artifact of the base branch in GitHub's REST shapes, and keeps the comments.

const action = readAction('root');
const _REPO_PATH = `/repos/${OWNER}/${REPO}`;
const PR_EVENT = path.join(ROOT, 'test/support/fixtures/pull_request.opened.json');
const SCRIPTS = ['load/api.js', 'load/checkout.js'];
const ARTIFACTS: Record<string, number> = {
  'k6-distributed-baseline-default-load-api.js': 7001,
  'k6-distributed-baseline-default-load-checkout.js': 7002,
};

const SCRIPT = `
import http from 'k6/http';
export const options = { vus: 2, iterations: 20, thresholds: { http_reqs: ['count>=20'] } };
export default function () { http.get(__ENV.TARGET + '/api/items'); }
`;

let target: RecordingTarget;
let github: FakeGitHub;
/** The zip served for each artifact id (set once the first step has real results). */
const zips = new Map<number, Buffer>();

beforeAll(async () => {
  target = await startNodeTarget();
  github = await startFakeGitHub(
    baseBranchRoutes(
      (name) => ARTIFACTS[name],
      (id) => zips.get(id),
    ),
  );
});
afterAll(async () => {
  await target?.stop();
  await github?.close();
});

function workspace(): string {
  const dir = tempDir('k6d-root-scripts-');
  mkdirSync(path.join(dir, 'load'));
  for (const s of SCRIPTS) writeFileSync(path.join(dir, s), SCRIPT);
  return dir;
}

/** dist/main.js with action.yml's defaults, two scripts by a glob, the local backend. */
async function runRoot(
  inputs: Record<string, string>,
  event: { name: string; path?: string },
): Promise<ActionStep & { workspace: string }> {
  const ws = workspace();
  const defaults = Object.fromEntries(
    Object.entries(action.inputs).map(([name, spec]) => [
      name,
      String(spec.default ?? '').includes('github.token') ? 'ghs_workflowtoken' : String(spec.default ?? ''),
    ]),
  );
  const step = await runAction(
    'dist/main.js',
    {
      ...defaults,
      script: 'load/*.js',
      runners: '2',
      backend: 'local',
      'k6-args': `-e TARGET=${target.url}`,
      ...inputs,
    },
    {
      workspace: ws,
      env: {
        GITHUB_EVENT_NAME: event.name,
        GITHUB_EVENT_PATH: event.path ?? '',
        GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
        GITHUB_RUN_ID: '9000',
        GITHUB_RUN_ATTEMPT: '1',
        GITHUB_WORKFLOW: 'perf',
        GITHUB_WORKFLOW_REF: `${OWNER}/${REPO}/.github/workflows/perf.yml@refs/pull/2/merge`,
        GITHUB_JOB: 'load-test',
        GITHUB_REF: 'refs/pull/2/merge',
        GITHUB_SHA: 'c0ffee0000000000000000000000000000000000',
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_API_URL: github.url,
      },
    },
  );
  return { ...step, workspace: ws };
}

/** A real result with its request rate scaled: the base branch's run of the same script. */
function withRate(result: RunResult, factor: number): RunResult {
  const copy = structuredClone(result);
  copy.metrics.http_reqs!.values.rate! *= factor;
  return copy;
}

describe('dist/main.js with two scripts on a pull request', () => {
  it('runs both, and posts one comment with a section per script, each against its own baseline', async () => {
    // The base branch's results: the same two scripts run for real, their rates made far lower
    // (api: this PR is better) and far higher (checkout: this PR regressed).
    const base = await runRoot({ report: 'false' }, { name: 'push' });
    expect(base.code, base.stdout + base.stderr).toBe(0);
    const baseResults = (JSON.parse(base.outputs.results!) as ScriptOutcome[]).map(
      (r) => JSON.parse(readFileSync(path.join(base.workspace, r['result-path']), 'utf8')) as RunResult,
    );
    for (const [i, factor] of [0.01, 100].entries()) {
      zips.set(
        7001 + i,
        zipStored({
          [RESULT_FILE]: JSON.stringify(withRate(baseResults[i]!, factor)),
          [BASELINE_METADATA_FILE]: JSON.stringify({ schema: 'k6-distributed/baseline@1', sha: MERGE_BASE }),
        }),
      );
    }

    const step = await runRoot({ gate: 'rps' }, { name: 'pull_request', path: PR_EVENT });
    expect(step.code, step.stdout + step.stderr).toBe(1);
    // Two results, two verdicts.
    const results = JSON.parse(step.outputs.results!) as ScriptOutcome[];
    expect(results.map((r) => [r.script, r.verdict])).toEqual([
      ['load/api.js', 'passed'],
      ['load/checkout.js', 'passed'],
    ]);
    expect(step.outputs.verdict).toBe('passed');
    // One comment, each script compared with its own baseline.
    expect(step.outputs['report-mode']).toBe('comment');
    expect(step.outputs['report-verdict']).toBe('regressed');
    expect(step.outputs['comment-url']).toBe(`https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-100`);
    expect(
      // The gated ones (latency on 127.0.0.1 may also be worse, ungated: gate is rps only).
      (JSON.parse(step.outputs.regressions!) as Array<{ script: string; metric: string; gated: boolean }>)
        .filter((r) => r.gated)
        .map((r) => [r.script, r.metric]),
    ).toEqual([['load/checkout.js', 'rps']]);
    expect(github.comments).toHaveLength(1);
    const body = github.comments[0]!.body;
    expect(body).toMatch(
      /^<!-- k6-distributed:report workflow=perf job=load-test key=default -->\n## k6 load test · 2 scripts\n/,
    );
    expect(body).toContain('| `load/api.js` | 🟢 No regression | ✅ passed |');
    expect(body).toContain('| `load/checkout.js` | 🔴 Regressed | ✅ passed |');
    expect(body).toContain('### load/api.js');
    expect(body).toContain('### load/checkout.js');
    // One summary: the same report, written once.
    expect(step.summary).toBe(body);
    expect(step.annotations).toContainEqual(
      expect.stringMatching(
        /^::error::load\/checkout\.js: performance regressed against master: Requests per second /,
      ),
    );
    const lookedUp = github.requests
      .filter((r) => r.path.includes('/actions/runs/501/artifacts'))
      .map((r) => new URL(r.path, 'http://x').searchParams.get('name'));
    expect(lookedUp).toEqual(Object.keys(ARTIFACTS));
    expect(github.unexpected).toEqual([]);
  });

  it('refuses one baseline file for several scripts before any load, naming the input', async () => {
    const step = await runRoot({ baseline: 'base.json' }, { name: 'pull_request', path: PR_EVENT });
    expect(step.code).toBe(1);
    expect(step.annotations).toEqual([
      '::error::baseline: one result file cannot be the baseline of several scripts; leave it empty to compare each script with its own stored baseline',
    ]);
    expect(step.stdout).not.toContain('preflight ok');
    expect(existsSync(path.join(step.workspace, 'k6-distributed-result-load-api.js.json'))).toBe(false);
  });
});
