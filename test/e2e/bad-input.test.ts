import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { k6ProcessesUnder, leftovers, runCli, startCli, writeScript } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';

// Real k6 and the real CLI: every mistake gives one clear line, exit code 2 (k6's 104/107 where k6
// refused it), and leaves nothing behind.

const valid = writeScript(`
import http from 'k6/http';
export const options = { vus: 3, iterations: 3, thresholds: { http_req_duration: ['p(95)<1000'] } };
export default function () { http.get('http://127.0.0.1:9/'); }
`);

describe('bad input', () => {
  it.each([
    [
      'a missing script',
      ['run', '/nonexistent/load.js'],
      /error: script: \/nonexistent\/load\.js does not exist/,
    ],
    ['fewer than 1 runner', ['run', valid, '--runners', '0'], /error: --runners: must be at least 1/],
    ['a grace of 0 seconds', ['run', valid, '--grace', '0'], /error: --grace: must be more than 0 seconds/],
    [
      'a runner count that is not a number',
      ['run', valid, '--runners', 'four'],
      /error: --runners: must be a whole number/,
    ],
    [
      'the runner tag the product sets',
      ['run', valid, '--', '--tag', 'k6d_runner=x'],
      /error: tags: the tag k6d_runner is set by k6-distributed on every runner's samples/,
    ],
    [
      'the run tag the product sets',
      ['run', valid, '--', '--tag', 'k6d_run=mine'],
      /error: tags: the tag k6d_run is set by k6-distributed on every runner's samples/,
    ],
    [
      'a file output every runner would overwrite',
      ['run', valid, '--runners', '2', '--', '--out', 'json=raw.json'],
      /error: k6 args: --out json=raw.json: every runner would write the same file; put \{runner\} in the path/,
    ],
    ['an unknown option of ours', ['run', valid, '--bogus'], /error: unknown option '--bogus'/],
    ['an unknown k6 flag', ['run', valid, '--', '--bogus'], /error: k6 archive .*: unknown flag: --bogus/],
    [
      'a flag the product sets',
      ['run', valid, '--', '--execution-segment', '0:1/2'],
      /error: k6 args: --execution-segment cannot be given/,
    ],
    [
      'a syntax error',
      ['run', writeScript('export default function( {\n')],
      /error: k6 archive .*script\.js.*Unexpected/,
    ],
    [
      'a malformed threshold',
      [
        'run',
        writeScript(
          `export const options = { thresholds: { http_reqs: ['count>>1'] } };\nexport default function () {}\n`,
        ),
      ],
      /error: k6 archive .*count>>1/,
    ],
    [
      'a threshold with an aggregation its metric lacks',
      [
        'run',
        writeScript(
          `export const options = { thresholds: { http_reqs: ['p(95)<1'] } };\nexport default function () {}\n`,
        ),
      ],
      /error: .*p\(95\)<1.*http_reqs/,
    ],
  ])('%s', async (name, args, message) => {
    const run = await runCli(args);
    // What k6 itself refuses exits with k6's code, as a plain k6 run would; our own checks exit 2.
    const k6Codes: Record<string, number> = {
      'a syntax error': 107,
      'a malformed threshold': 104,
      'a threshold with an aggregation its metric lacks': 104,
    };
    expect(run.code).toBe(k6Codes[name] ?? 2);
    expect(run.stderr).toMatch(message);
    // One line, no stack trace.
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.result).toBeUndefined();
    expect(k6ProcessesUnder(run.tmp)).toEqual([]);
    expect(leftovers(run.tmp)).toEqual([]);
  });
});

describe('interruption', () => {
  let target: RecordingTarget;
  beforeAll(async () => {
    target = await startNodeTarget();
  });
  afterAll(async () => {
    await target.stop();
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s stops every runner, writes the partial result and exits',
    async (signal) => {
      const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 4, duration: '60s' };
export default function () { http.get(__ENV.TARGET + '/'); sleep(0.05); }
`);
      const { child, done } = startCli(['run', script, '--runners', '4', '--', '-e', `TARGET=${target.url}`]);
      let stderr = '';
      child.stderr!.on('data', (d) => {
        stderr += d;
      });
      await waitFor(() => stderr.includes('started 4 runners'), "the run to log 'started 4 runners'", {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      await new Promise((r) => setTimeout(r, 1500));
      child.kill(signal);
      const run = await done;
      expect(run.code).toBe(130);
      expect(run.result!.verdict).toBe('failed');
      expect(run.result!.failures).toContain(
        'interrupted: the run was cancelled and every runner was stopped',
      );
      expect(run.result!.failureKinds).toEqual(['interrupted']);
      expect(run.result!.metrics.http_reqs!.values.count).toBeGreaterThan(0);
      expect(run.result!.runners.map((r) => r.exitCode)).toEqual([103, 103, 103, 103]);
      expect(k6ProcessesUnder(run.tmp)).toEqual([]);
      expect(leftovers(run.tmp)).toEqual([]);
    },
  );
});
