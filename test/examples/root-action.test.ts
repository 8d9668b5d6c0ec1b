import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, readAction } from '../docs/support/actions.ts';
import { type ActionStep, runAction } from '../support/action.ts';
import { tempDir } from '../support/cli.ts';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.ts';
import { type Shop, startShop } from './support/shop.ts';

// The root action (action.yml -> dist/main.js), run the way GitHub runs a node24 action: every
// input as INPUT_<NAME> with action.yml's defaults, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, the
// event payload. It runs the test with the local backend, then reports: with `report: false`
// (nothing leaves the machine), and on a pull request against a baseline file, commenting on a
// small fake GitHub on 127.0.0.1 (the comment mode's only API calls).

const action = readAction('root');
const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const PR_EVENT = path.join(ROOT, 'test/support/fixtures/pull_request.opened.json');

let shop: Shop;
let github: FakeGitHub;
beforeAll(async () => {
  shop = await startShop();
  github = await startFakeGitHub([]);
});
afterAll(async () => {
  await shop.stop();
  await github.close();
});

/** Runs dist/main.js with action.yml's defaults, the given inputs, and the event. */
function runRoot(
  inputs: Record<string, string>,
  event: { name: string; path?: string } = { name: 'push' },
  workspace = tempDir('k6d-root-'),
): Promise<ActionStep & { workspace: string }> {
  const defaults = Object.fromEntries(
    Object.entries(action.inputs).map(([name, spec]) => [
      name,
      String(spec.default ?? '').includes('github.token') ? 'ghs_workflowtoken' : String(spec.default ?? ''),
    ]),
  );
  const step = runAction(
    'dist/main.js',
    { ...defaults, ...inputs },
    {
      workspace,
      env: {
        GITHUB_EVENT_NAME: event.name,
        GITHUB_EVENT_PATH: event.path ?? '',
        GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
        GITHUB_RUN_ID: '9000',
        GITHUB_RUN_ATTEMPT: '1',
        GITHUB_WORKFLOW: 'perf',
        GITHUB_JOB: 'load-test',
        GITHUB_REF: 'refs/pull/2/merge',
        GITHUB_SHA: 'c0ffee0000000000000000000000000000000000',
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_API_URL: github.url,
      },
    },
  );
  return step.then((s) => ({ ...s, workspace }));
}

const quickstart = () => ({
  script: path.join(ROOT, 'examples/quickstart.js'),
  runners: '2',
  backend: 'local',
  'k6-args': `-e BASE_URL=${shop.url} -e RATE=100 -e DURATION=2s`,
});

const REPORT_OUTPUTS = [
  'report-mode',
  'report-verdict',
  'regressions',
  'baseline-sha',
  'baseline-run-id',
  'comment-url',
  'artifact-id',
];

describe('action.yml (the root action)', () => {
  it('is dist/main.js on node24, with the run action’s post step', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/main.js', post: 'dist/run-post.js' });
    expect(existsSync(path.join(ROOT, 'dist/main.js'))).toBe(true);
  });

  it('has every input of actions/run, and of actions/report but result, with the same defaults', () => {
    const run = readAction('run');
    const report = readAction('report');
    for (const [name, spec] of Object.entries(run.inputs)) {
      expect(action.inputs[name], name).toBeDefined();
      expect(action.inputs[name]!.default, name).toEqual(spec.default);
      expect(Boolean(action.inputs[name]!.required), name).toBe(Boolean(spec.required));
    }
    for (const [name, spec] of Object.entries(report.inputs)) {
      if (name === 'result') continue;
      expect(action.inputs[name], name).toBeDefined();
      expect(action.inputs[name]!.default, name).toEqual(spec.default);
    }
    const known = new Set([...Object.keys(run.inputs), ...Object.keys(report.inputs), 'report']);
    expect(Object.keys(action.inputs).filter((n) => !known.has(n))).toEqual([]);
    // The run's outputs under their own names, the report's (but run-verdict) prefixed where they collide.
    expect(Object.keys(action.outputs)).toEqual([...Object.keys(run.outputs), ...REPORT_OUTPUTS]);
  });
});

describe('dist/main.js with backend: local', () => {
  let baselineFile: string;

  it('with report: false, runs the test, sets the run’s outputs and writes its report', async () => {
    const step = await runRoot({ ...quickstart(), report: 'false' });
    expect(step.code, step.stdout + step.stderr).toBe(0);
    expect(step.outputs.verdict).toBe('passed');
    expect(step.outputs['thresholds-ok']).toBe('true');
    expect(Number(step.outputs.rps)).toBeGreaterThan(0);
    expect(Number(step.outputs.p95)).toBeGreaterThan(0);
    expect(step.outputs['error-rate']).toBe('0');
    for (const name of REPORT_OUTPUTS)
      expect(step.outputs[name], name).toBe(name === 'regressions' ? '[]' : '');
    expect(Object.keys(step.outputs).sort()).toEqual(Object.keys(action.outputs).sort());
    expect(step.summary).toContain('✅ passed');
    expect(step.summary).toContain('| `http_reqs` | `count>100` |');
    expect(github.requests).toEqual([]);
    baselineFile = path.join(tempDir('k6d-baseline-'), 'baseline.json');
    copyFileSync(path.join(step.workspace, step.outputs['result-path']!), baselineFile);
  });

  it('on a pull request, runs the test and comments with the comparison', async () => {
    const step = await runRoot(
      { ...quickstart(), baseline: baselineFile, gate: 'none' },
      {
        name: 'pull_request',
        path: PR_EVENT,
      },
    );
    expect(step.code, step.stdout + step.stderr).toBe(0);
    expect(step.outputs.verdict).toBe('passed');
    expect(step.outputs['report-mode']).toBe('comment');
    expect(step.outputs['report-verdict']).toBe('passed');
    expect(step.outputs['comment-url']).toBe(`https://github.com/${OWNER}/${REPO}/pull/2#issuecomment-100`);
    expect(Object.keys(step.outputs).sort()).toEqual(Object.keys(action.outputs).sort());
    expect(github.comments).toHaveLength(1);
    const body = github.comments[0]!.body;
    expect(body).toContain('**🟢 No regression** against `master` at 95% confidence');
    // One summary: the comparison (which holds the run's report), not the run's report again.
    expect(step.summary).toBe(body);
    expect(github.requests.map((r) => `${r.method} ${r.path.replace(/\?.*/, '')}`)).toEqual([
      `GET /repos/${OWNER}/${REPO}/issues/2/comments`,
      `POST /repos/${OWNER}/${REPO}/issues/2/comments`,
    ]);
    expect(github.requests.every((r) => r.authorization === 'token ghs_workflowtoken')).toBe(true);
    expect(github.unexpected).toEqual([]);
  });

  it('refuses a bad report input before any runner starts', async () => {
    const step = await runRoot({ ...quickstart(), gate: 'p95, p97' });
    expect(step.code).toBe(1);
    expect(step.annotations).toEqual([
      '::error::gate: unknown metric "p97"; use rps, p50, p90, p95, p99, error-rate, checks or none',
    ]);
    expect(step.stdout).not.toContain('preflight ok');
    expect(existsSync(path.join(step.workspace, 'k6-distributed-result.json'))).toBe(false);
  });

  it('refuses post-bundle, which belongs to actions/report in the workflow_run workflow', async () => {
    const step = await runRoot({ ...quickstart(), mode: 'post-bundle' });
    expect(step.code).toBe(1);
    expect(step.annotations[0]).toMatch(/^::error::mode: post-bundle .* use actions\/report/);
    expect(step.stdout).not.toContain('preflight ok');
  });

  it('skips the report when the run wrote no result, and says why', async () => {
    const step = await runRoot({ ...quickstart(), script: 'missing.js' });
    expect(step.code).toBe(1);
    expect(step.annotations[0]).toMatch(/^::error::/);
    expect(step.stdout).toContain('report: skipped, the run wrote no result');
    expect(step.outputs['report-verdict']).toBe('');
    expect(readFileSync(path.join(step.workspace, '.github-summary'), 'utf8')).toBe('');
  });
});
