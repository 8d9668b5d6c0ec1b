import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { ROOT, runCli, tempDir, writeScript } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';

/*
 * The CLI's report where a user reads it: in a real terminal (a tmux pane, captured with its
 * colours) and through a pipe, from a real run of real k6 processes. The renderer's own cases are
 * in test/unit/render/terminal.test.ts.
 */

const ESC = '\x1b';
const stripEscapes = (s: string) => s.replaceAll(new RegExp(`${ESC}\\[[0-9;:]*m`, 'g'), '');

/** A run with a passing and a failing threshold, a check that fails, and names markdown escaped. */
const SCRIPT = `
import http from 'k6/http';
import { check, group } from 'k6';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 20 } },
  thresholds: { http_req_duration: ['p(95)<5000'], http_reqs: ['count<10'] },
};
export default function () {
  const r = http.get(__ENV.TARGET + '/t');
  group('k6d-loadtest-8', () => {
    check(r, { 'count<6 & (x)': () => false, 'status is 200': (res) => res.status === 200 });
  });
}
`;

let target: RecordingTarget;
/** Why the terminal test cannot run here ('' when tmux is there). */
let noTmux = '';
beforeAll(async () => {
  target = await startNodeTarget();
  try {
    execFileSync('bash', [path.join(ROOT, 'scripts/ensure-tmux.sh')], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    noTmux = `tmux could not be installed: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`;
  }
});
afterAll(async () => {
  await target.stop();
});

/** Checks the layout that both outputs share, on the text without colours. */
function expectLayout(text: string): void {
  for (const title of ['█ THRESHOLDS', '█ TOTAL RESULTS', '█ RUNNERS', '█ VERDICT'])
    expect(text).toContain(title);
  expect(text.indexOf('█ THRESHOLDS')).toBeLessThan(text.indexOf('█ TOTAL RESULTS'));
  expect(text).toMatch(/✗ 'count<10' count=20\n/);
  expect(text).toMatch(/✓ 'p\(95\)<5000' p\(95\)=[\d.]+(µs|ms)\n/);
  expect(text).toContain('✗ k6d-loadtest-8 › count<6 & (x)');
  expect(text).toContain('↳  0% — ✓ 0 / ✗ 20');
  for (const escaped of ['&lt;', '&amp;', '\\(', '\\-', '`', '|---']) expect(text).not.toContain(escaped);
  // The dots of every metric line end in one column, and each trend statistic starts in one column.
  const metrics = text.split('\n').filter((l) => /^ {4}\S.*\.{3,}: /.test(l) && !l.includes('checks_'));
  expect(metrics.length).toBeGreaterThanOrEqual(6);
  expect(new Set(metrics.map((l) => /\.{3,}:/.exec(l)!.index + /\.{3,}:/.exec(l)![0].length)).size).toBe(1);
  const trends = metrics.filter((l) => l.includes('avg='));
  expect(trends.length).toBeGreaterThanOrEqual(2);
  for (const stat of ['min=', 'med=', 'max=', 'p(90)=', 'p(95)='])
    expect(new Set(trends.map((l) => l.indexOf(stat))).size, stat).toBe(1);
  // The runners table: each row's exit mark under the header's `exit`.
  const lines = text.split('\n');
  const header = lines.find((l) => /^ {4}runner {2}segment/.test(l))!;
  const rows = lines.filter((l) => /^ {4} +\d+ {2}\d/.test(l) && l.includes('exit'));
  expect(rows).toHaveLength(2);
  for (const row of rows) expect(row.indexOf('✓')).toBe(header.indexOf('exit'));
}

describe('the CLI report', () => {
  it('in a terminal: k6-like, coloured ✓ and ✗, columns aligned, no markdown escapes', async (ctx) => {
    if (noTmux) ctx.skip(noTmux);
    const script = writeScript(SCRIPT);
    const dir = path.dirname(script);
    const socket = `k6d-test-${process.pid}`;
    const done = path.join(dir, 'done');
    const command = [
      'env -u NO_COLOR -u FORCE_COLOR',
      `K6_BINARY=${process.env.K6_BINARY}`,
      `TMPDIR=${tempDir('k6d-tmux-tmp-')}`,
      process.execPath,
      path.join(ROOT, 'src/cli/bin.ts'),
      `run ${script} -n 2 -o ${path.join(dir, 'r.json')} -- -e TARGET=${target.url}`,
      `; echo "exit $?" > ${done}; sleep 600`,
    ].join(' ');
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    tmux('new-session', '-d', '-x', '250', '-y', '100', '-s', 'k6d', command);
    try {
      await waitFor(
        () => {
          try {
            return readFileSync(done, 'utf8').trim() !== '';
          } catch {
            return false;
          }
        },
        'the CLI in the tmux pane to end',
        { timeoutMs: 60_000 },
      );
      expect(readFileSync(done, 'utf8').trim()).toBe('exit 99');
      const screen = tmux('capture-pane', '-p', '-e', '-J', '-S', '-', '-t', 'k6d');
      // Colours as a terminal shows them: ✓ in green (32), ✗ in red (31).
      expect(screen).toMatch(new RegExp(`${ESC}\\[[0-9;]*32m✓`));
      expect(screen).toMatch(new RegExp(`${ESC}\\[[0-9;]*31m✗`));
      expectLayout(stripEscapes(screen).replace(/[ \t]+$/gm, ''));
    } finally {
      tmux('kill-server');
    }
  });

  it('through a pipe: the same layout without one escape byte; --report and --junit written', async () => {
    const script = writeScript(SCRIPT);
    const dir = path.dirname(script);
    const junit = path.join(dir, 'junit.xml');
    const markdown = path.join(dir, 'report.md');
    const run = await runCli(
      ['run', script, '-n', '2', '--report', markdown, '--junit', junit, '--', '-e', `TARGET=${target.url}`],
      { env: { FORCE_COLOR: '' } },
    );
    expect(run.code, run.stderr).toBe(99);
    expect(run.stdout).not.toContain(ESC);
    expectLayout(run.stdout);
    // The markdown report is still the job summary's, escapes and all.
    expect(readFileSync(markdown, 'utf8')).toContain('| `http_reqs` | `count<10` | 20 | ❌ fail |');
    const xml = readFileSync(junit, 'utf8');
    const lint = await validateXML({
      xml: [{ fileName: 'junit.xml', contents: xml }],
      normalization: 'c14n',
    });
    expect(lint.errors).toEqual([]);
    expect(xml).toContain('<testsuites name="k6-distributed: ');
    expect(xml).toContain('name="http_reqs: count&lt;10"');
    expect(xml).toContain('<failure message="count=20, limit count&lt;10" type="threshold">');
    expect(xml).toContain('name="k6d-loadtest-8 › count&lt;6 &amp; (x)"');
    expect(run.stderr).toContain(`JUnit report written to ${junit}`);
  });
});
