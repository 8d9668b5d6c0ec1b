import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { runResultSchema } from '../../src/result/schema.ts';
import { preflight } from '../../src/run/preflight.ts';
import { k6Binary } from '../equivalence/harness.ts';
import { collectOutput, runCli, tempDir, writeScript } from '../support/cli.ts';

// handleSummary() once on the global data, the drop-in data object in the result JSON, and the
// runner entry module (issue #9, deliverables 3 and 4). Real k6 v2.2.0 processes (plain `k6 run`
// and the CLI's runners) against a real HTTP server on 127.0.0.1; the data object is given to
// real consumers from the npm registry: `k6-html-reporter` (renders a handleSummary data file to
// HTML) and `k6-junit` (jslib-style `jUnit(data)` for handleSummary). jslib-summary's
// `textSummary` is not published on the npm registry (k6 loads it from its own jslib host), so it
// is not tested here.

const require = createRequire(import.meta.url);
const { generateSummaryReport } = require('k6-html-reporter') as {
  generateSummaryReport(o: { jsonFile: string; output: string }): void;
};
const { jUnit } = require('k6-junit') as { jUnit(data: unknown): string };

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

/** Runs plain `k6 run` in `cwd`. */
async function k6Run(script: string, cwd: string, args: string[] = []) {
  const child = spawn(k6Binary(), ['run', '--no-usage-report', '-q', ...args, script], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collectOutput(child);
}

/** A script whose handleSummary writes the data object it receives to `data.json`. */
const dumping = (body: string) => `
import http from 'k6/http';
import { check, group } from 'k6';
import exec from 'k6/execution';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
const items = new Counter('items');
const odd = new Rate('odd');
const level = new Gauge('level');
const work = new Trend('work', true);
${body}
export default function () {
  group('outer', () => {
    const res = http.get(__ENV.TARGET + '/ok', { tags: { name: 'ok' } });
    check(res, { 'status 200': (r) => r.status === 200, 'never': () => false });
  });
  items.add(2);
  odd.add(exec.scenario.iterationInTest % 2 === 1);
  level.add(7);
  work.add(3);
}
export function handleSummary(data) {
  return { 'data.json': JSON.stringify(data), stdout: 'user summary: ' + data.metrics.iterations.values.count + ' iterations\\n' };
}
`;

const OPTIONS = `export const options = {
  vus: 4, iterations: 20,
  summaryTrendStats: ['avg', 'min', 'p(99)', 'count'],
  thresholds: { iterations: ['count==20'], 'http_req_duration{name:ok}': ['p(99)<5000'], checks: ['rate>0.9'], items: ['count>1000'] },
};`;

/** The same with k6's default summaryTrendStats (k6-html-reporter reads avg, min, med, max, p(90), p(95)). */
const DEFAULT_STATS = OPTIONS.replace(/\n {2}summaryTrendStats: .*\n/, '\n');

type Data = {
  metrics: Record<
    string,
    { type: string; contains: string; values: Record<string, number>; thresholds?: object }
  >;
  root_group: unknown;
  options: unknown;
  state: Record<string, unknown>;
};

/** What does not depend on timing: every metric's type, contains, value keys and threshold verdicts. */
function shape(data: Data) {
  const deterministic = new Set(['iterations', 'items', 'checks', 'odd', 'level', 'http_reqs']);
  return Object.fromEntries(
    Object.entries(data.metrics)
      .filter(([name]) => !name.startsWith('vus'))
      .map(([name, m]) => [
        name,
        {
          type: m.type,
          contains: m.contains,
          keys: Object.keys(m.values).sort(),
          ...(deterministic.has(name.split('{')[0]!)
            ? {
                values: Object.fromEntries(
                  Object.entries(m.values).filter(([k]) => k !== 'rate' || m.type === 'rate'),
                ),
              }
            : {}),
          thresholds: m.thresholds,
        },
      ]),
  );
}

/** Drops ids (k6's are md5 of the path: compared separately) for comparing trees. */
function sameTree(group: unknown): unknown {
  return JSON.parse(JSON.stringify(group));
}

describe('handleSummary() once, on the whole test', () => {
  let k6Data: Data;
  let k6Dir: string;
  beforeAll(async () => {
    k6Dir = tempDir('k6d-hs-k6-');
    const script = path.join(k6Dir, 'script.js');
    writeFileSync(script, dumping(OPTIONS));
    await k6Run(script, k6Dir, ['-e', `TARGET=${target.url}`]);
    k6Data = JSON.parse(readFileSync(path.join(k6Dir, 'data.json'), 'utf8')) as Data;
  });

  it.each([1, 3])(
    'N=%i: the user function runs once with the global data, as k6 gives it',
    async (runners) => {
      const dir = tempDir('k6d-hs-');
      const script = path.join(dir, 'script.js');
      writeFileSync(script, dumping(OPTIONS));
      const run = await runCli(['run', script, '-n', String(runners), '--', '-e', `TARGET=${target.url}`], {
        cwd: dir,
      });
      expect(run.code, run.stderr).toBe(99); // items count>1000 crosses, as in k6
      // Written once, by one process, with the whole test's data (not a runner's slice).
      expect(run.stdout.match(/user summary: /g)).toEqual(['user summary: ']);
      expect(run.stdout).toContain('user summary: 20 iterations');
      const data = JSON.parse(readFileSync(path.join(dir, 'data.json'), 'utf8')) as Data;
      expect(Object.keys(data).sort()).toEqual(
        Object.keys(k6Data)
          .sort()
          .filter((k) => k !== 'setup_data'),
      );
      expect(shape(data)).toEqual(shape(k6Data));
      expect(data.options).toEqual(k6Data.options);
      expect(sameTree(data.root_group)).toEqual(sameTree(k6Data.root_group));
      // The script's summaryTrendStats, computed on the merged grids.
      expect(Object.keys(data.metrics.work!.values).sort()).toEqual(['avg', 'count', 'min', 'p(99)']);
      expect(data.metrics.work!.values).toEqual({ avg: 3, min: 3, 'p(99)': 3, count: 20 });
      // The result JSON carries the same object.
      const result = runResultSchema.parse(run.result);
      expect(result.summary!.metrics.iterations!.values.count).toBe(20);
      expect(result.summary!.root_group).toEqual(data.root_group);
    },
  );

  it('real consumers render our data as they render k6 data: k6-html-reporter and k6-junit', async () => {
    const dir = tempDir('k6d-hs-consumers-');
    const script = path.join(dir, 'script.js');
    writeFileSync(script, dumping(DEFAULT_STATS));
    const plainDir = tempDir('k6d-hs-consumers-k6-');
    writeFileSync(path.join(plainDir, 'script.js'), dumping(DEFAULT_STATS));
    await k6Run(path.join(plainDir, 'script.js'), plainDir, ['-e', `TARGET=${target.url}`]);
    const k6Data = JSON.parse(readFileSync(path.join(plainDir, 'data.json'), 'utf8')) as Data;
    const run = await runCli(['run', script, '-n', '2', '--', '-e', `TARGET=${target.url}`], { cwd: dir });
    const ours = run.result!.summary!;
    // k6-junit: checks and thresholds as test cases; deterministic, so the XML is the same.
    // k6's metrics come in Go map order (random): compare the lines sorted.
    const lines = (xml: string) => xml.split('\n').sort();
    expect(lines(jUnit(ours))).toEqual(lines(jUnit(k6Data)));
    expect(jUnit(ours)).toContain('threshold exceeded');
    // k6-html-reporter: the same HTML once the numbers that depend on timing are masked.
    const render = (data: unknown, name: string) => {
      const json = path.join(dir, `${name}.json`);
      writeFileSync(json, JSON.stringify(data));
      const out = path.join(dir, name);
      mkdirSync(out, { recursive: true });
      generateSummaryReport({ jsonFile: json, output: out });
      return path.join(out, 'report.html');
    };
    const masked = (file: string) =>
      readFileSync(file, 'utf8')
        .replace(/<p[^>]*>[^<]*(AM|PM|\d{4})[^<]*<\/p>/g, '')
        .replace(/-?\d+(\.\d+)?(e-?\d+)?/g, '#');
    const withoutTimingMetrics = (data: Data): Data => ({
      ...data,
      // Sorted: k6's metrics come in Go map order, which the reporter keeps.
      metrics: Object.fromEntries(
        Object.entries(data.metrics)
          .filter(([n]) => !n.startsWith('vus'))
          .sort(([a], [b]) => a.localeCompare(b)),
      ),
    });
    const oursHtml = render(withoutTimingMetrics(ours as unknown as Data), 'ours');
    const k6Html = render(withoutTimingMetrics(k6Data), 'k6');
    await new Promise((r) => setTimeout(r, 500)); // ejs renders through a callback
    expect(existsSync(oursHtml)).toBe(true);
    expect(masked(oursHtml)).toBe(masked(k6Html));
    expect(readFileSync(oursHtml, 'utf8')).toContain('status 200');
  });

  it('a handleSummary that throws is reported as k6 reports it, and the exit code is kept', async () => {
    const body = `
export const options = { vus: 2, iterations: 4 };
export default function () {}
export function handleSummary() { throw new Error('boom in summary'); }
`;
    const dir = tempDir('k6d-hs-throw-');
    const script = path.join(dir, 'script.js');
    writeFileSync(script, body);
    const plain = await k6Run(script, dir);
    const run = await runCli(['run', script, '-n', '2'], { cwd: dir });
    expect(run.code).toBe(plain.code);
    expect(plain.stderr).toContain('boom in summary');
    expect(run.stderr).toContain('Error: boom in summary');
    expect(run.stderr).toContain('handleSummary() failed');
    // Not k6's fallback text summary of the summary process's own empty iteration: one TOTAL
    // RESULTS, the CLI's own report's.
    expect(run.stdout.match(/TOTAL RESULTS/g)).toEqual(['TOTAL RESULTS']);
  });
});

describe('the runner entry module', () => {
  const K6 = k6Binary();
  const inspect = (file: string) =>
    JSON.parse(
      execFileSync(K6, ['inspect', '--execution-requirements', file], { encoding: 'utf8' }),
    ) as Record<string, unknown>;

  it("keeps the script's tags, scenarios and options, with abortOnFail switched off, and needs no default export", async () => {
    const script = writeScript(`
export const options = {
  tags: { runner: 'ci-linux-1', team: 'a' },
  scenarios: {
    api: { executor: 'constant-vus', vus: 2, duration: '1s', exec: 'api', tags: { kind: 'api' }, env: { A: 'b' } },
    web: { executor: 'shared-iterations', vus: 1, iterations: 3, exec: 'web', startTime: '1s' },
  },
  thresholds: {
    'http_reqs{runner:ci-linux-1}': [{ threshold: 'count>=0', abortOnFail: true, delayAbortEval: '2s' }],
    iterations: ['count>0'],
  },
  summaryTrendStats: ['avg', 'p(99)'],
  setupTimeout: '7s',
};
export function api() {}
export function web() {}
export function handleSummary() { return { 'should-not-exist.txt': 'x' }; }
`);
    const workDir = tempDir('k6d-entry-');
    const pre = await preflight({ k6Binary: K6, script, k6Args: [], workDir });
    expect(pre.handleSummary).toBe(true);
    const direct = inspect(script);
    const archived = inspect(pre.archivePath);
    for (const key of ['tags', 'scenarios', 'summaryTrendStats', 'setupTimeout', 'maxVUs', 'totalDuration'])
      expect(archived[key], key).toEqual(direct[key]);
    expect(archived.tags).toEqual({ runner: 'ci-linux-1', team: 'a' });
    expect(archived.thresholds).toEqual({
      // k6 prints a threshold without abortOnFail as its expression alone.
      'http_reqs{runner:ci-linux-1}': ['count>=0'],
      iterations: ['count>0'],
    });
    // The runner's handleSummary is a no-op: nothing written, the summary export still is.
    const cwd = tempDir('k6d-entry-run-');
    execFileSync(K6, ['run', '-q', '--no-usage-report', '--summary-export', 'export.json', pre.archivePath], {
      cwd,
      stdio: 'ignore',
    });
    expect(existsSync(path.join(cwd, 'should-not-exist.txt'))).toBe(false);
    expect(existsSync(path.join(cwd, 'export.json'))).toBe(true);
  });

  it('runs a script given as a k6 archive as it is, and says so before the run', async () => {
    const script = writeScript(
      `export const options = { vus: 1, iterations: 1 };\nexport default function () {}\n`,
    );
    const tar = path.join(path.dirname(script), 'test.tar');
    execFileSync(K6, ['archive', '-q', '-O', tar, script]);
    const pre = await preflight({
      k6Binary: K6,
      script: tar,
      k6Args: [],
      workDir: tempDir('k6d-entry-tar-'),
    });
    expect(pre.isArchive).toBe(true);
    expect(pre.handleSummary).toBe(false);
    expect(pre.warnings.join('\n')).toMatch(/is a k6 archive: it runs as it is/);
  });
});
