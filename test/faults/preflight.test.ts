import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll } from 'vitest';
import { K6_COMMAND_TIMEOUT_ENV, resolveK6Binary } from '../../src/k6/binary.ts';
import { type CliRun, k6ProcessesUnder, leftovers, startCli, tempDir, writeScript } from '../support/cli.ts';
import { type FaultCase, type FaultOutcome, faultTable, shellExitCode } from './table.ts';

// The preflight's faults and hostile inputs (issue 25, defect 3), with the real CLI and real k6:
// what it refuses before any load, in one line naming the input, and what it honours or says.

const k6 = resolveK6Binary(undefined);
const dir = tempDir('k6d-preflight-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const quick = writeScript(
  'export const options = { vus: 2, iterations: 2 };\nexport default function () {}\n',
);

/** A "k6" that hangs at `command` (as a stuck k6 or wrapper would) and is k6 otherwise. */
function hangingK6(command: string): string {
  const file = path.join(tempDir('k6d-hang-'), 'k6');
  writeFileSync(file, `#!/bin/sh\nif [ "$1" = "${command}" ]; then exec sleep 3617; fi\nexec "${k6}" "$@"\n`);
  chmodSync(file, 0o755);
  return file;
}

/** The `sleep 3617` processes a hanging fake left (none once the CLI killed them). */
function hangingLeft(): string[] {
  try {
    return execFileSync('pgrep', ['-af', 'sleep 3617'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('sleep 3617') && !l.includes('pgrep'));
  } catch {
    return [];
  }
}

async function outcome(run: CliRun, dataLost?: string): Promise<FaultOutcome> {
  return {
    code: shellExitCode(run.code, run.signal ?? null),
    stderr: run.stderr,
    leftovers: [
      ...k6ProcessesUnder(run.tmp),
      ...hangingLeft(),
      ...leftovers(run.tmp).map((f) => `${run.tmp}/${f}`),
    ],
    ...(dataLost ? { dataLost } : {}),
  };
}

/** Runs the CLI to its end; `check` says what was lost or wrong (undefined when nothing). */
async function cliCase(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string },
  check: (run: CliRun) => string | undefined,
): Promise<FaultOutcome> {
  const run = await startCli(args, { ...(options.cwd ? { cwd: options.cwd } : {}), env: { ...options.env } })
    .done;
  return outcome(run, check(run));
}

/** Refused before any load: exit 2, one line, no runner started; `check` says what else was lost. */
function refused(
  name: string,
  args: () => string[],
  message: RegExp,
  options: { env?: Record<string, string>; check?: () => string | undefined } = {},
): FaultCase {
  const check = (run: CliRun) =>
    run.stderr.includes('started') ? 'the load ran although the input was bad' : options.check?.();
  return { name, code: 2, message, run: () => cliCase(args(), options, check) };
}

/** A run that must pass (exit 0); `check` returns what is wrong with it. */
function passes(
  name: string,
  args: () => string[],
  check: (run: CliRun) => string | undefined,
  options: { cwd?: string; message?: RegExp } = {},
): FaultCase {
  const message = options.message ? { message: options.message } : {};
  return { name, code: 0, ...message, run: () => cliCase(args(), options, check) };
}

const fastTimeout = { [K6_COMMAND_TIMEOUT_ENV]: '2' };
const out = (name: string) => path.join(dir, name);

const cases: FaultCase[] = [
  ...['version', 'archive', 'inspect'].map((command) => ({
    ...refused(
      `a k6 that hangs at \`${command}\` is killed after the timeout, in one line naming the binary and the command`,
      () => ['run', quick, '--k6', hangingK6(command), '-o', out(`hang-${command}.json`)],
      new RegExp(`error: k6 binary: \\S+/k6 did not finish \`k6 ${command}( \\S+)?\` within 2 s`),
      { env: fastTimeout },
    ),
    timeoutMs: 30_000,
  })),
  refused(
    '--k6-args with a quote left open is refused, naming --k6-args',
    () => ['run', quick, '--k6-args', "-e 'A=1"],
    /error: --k6-args: the ' at character 4 is never closed: -e 'A=1$/m,
  ),
  refused(
    'a script that is a character device (/dev/null) is called one, not a directory',
    () => ['run', '/dev/null'],
    /error: script: \/dev\/null is a character device, not a k6 script or archive/,
  ),
  refused(
    "k6's --out json= naming the result's file is refused, and the file is left as it was",
    () => {
      writeFileSync(out('b.json'), 'previous');
      return [
        'run',
        quick,
        '-n',
        '1',
        '-o',
        out('b.json'),
        '--no-html',
        '--',
        '--out',
        `json=${out('b.json')}`,
      ];
    },
    /error: k6 args: --out json=\S+b\.json: \S+b\.json is the same file as --out \S+b\.json/,
    {
      check: () =>
        readFileSync(out('b.json'), 'utf8') === 'previous' ? undefined : 'b.json was overwritten',
    },
  ),
  refused(
    "k6's --out csv= with {runner} is checked runner by runner against the result",
    () => ['run', quick, '-n', '2', '-o', out('raw-1.csv'), '--', '--out', `csv=${out('raw-{runner}.csv')}`],
    /error: k6 args: --out csv=\S+raw-\{runner\}\.csv: \S+raw-1\.csv is the same file as --out /,
  ),
  refused(
    "k6's --out into a folder that does not exist is refused before the load",
    () => ['run', quick, '-n', '2', '--', '--out', 'json=/nonexistent-k6d/raw-{runner}.json'],
    /error: k6 args: --out json=\/nonexistent-k6d\/raw-\{runner\}\.json: the folder \/nonexistent-k6d does not exist/,
  ),
  refused(
    '--out json=/dev/stdout on 2 runners suggests a file per runner, not /dev/stdout-{runner}',
    () => ['run', quick, '-n', '2', '--', '--out', 'json=/dev/stdout'],
    /error: k6 args: --out json=\/dev\/stdout: \/dev\/stdout is one stream, which 2 runners cannot share; write one file per runner, e\.g\. --out json=raw-\{runner\}\.json$/m,
  ),
  passes(
    'a script named -dash.js is read as a file, not as the flags -d ash.js',
    () => ['run', '-o', out('dash.json'), '--no-html', '--', '-dash.js'],
    (run) => (run.result?.script === '-dash.js' ? undefined : `no result for -dash.js: ${run.stderr}`),
    { cwd: path.dirname(writeScript(readFileSync(quick, 'utf8'), '-dash.js')) },
  ),
  passes(
    '--summary-trend-stats is honoured as options.summaryTrendStats is, with the value plain k6 gives',
    () => {
      const script = writeScript(
        `import { Trend } from 'k6/metrics';\nimport exec from 'k6/execution';\nconst pct = new Trend('pct');\n` +
          `export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 400 } } };\n` +
          'export default function () { pct.add(exec.scenario.iterationInTest); }\n',
      );
      return [
        'run',
        script,
        '-n',
        '2',
        '-o',
        out('stats.json'),
        '--no-html',
        '--',
        '--summary-trend-stats',
        'avg,p(99.5),max',
      ];
    },
    (run) => {
      const stats = run.result?.summary?.options.summaryTrendStats;
      const value = run.result?.summary?.metrics.pct?.values['p(99.5)'];
      // k6 run --summary-trend-stats avg,p(99.5),max on the same samples 0..399: p(99.5)=397.005.
      if (JSON.stringify(stats) !== '["avg","p(99.5)","max"]')
        return `summaryTrendStats ${JSON.stringify(stats)}`;
      return value !== undefined && Math.abs(value - 397.005) < 1e-9 ? undefined : `p(99.5) ${value}`;
    },
  ),
  passes(
    'a script reading exec.instance.* on 2 runners gets a note before the run, as for __VU',
    () => [
      'run',
      writeScript(
        `import exec from 'k6/execution';\nexport const options = { vus: 2, iterations: 2 };\n` +
          'export default function () { if (exec.instance.iterationsCompleted > 1e9) throw new Error(); }\n',
      ),
      '-n',
      '2',
      '-o',
      out('instance.json'),
    ],
    (run) =>
      run.stderr.indexOf('exec.instance') >= 0 &&
      run.stderr.indexOf('exec.instance') < run.stderr.indexOf('started')
        ? undefined
        : 'no note before the start',
    { message: /warning: the script reads exec\.instance\.\*: each of the 2 runners is its own k6 instance/ },
  ),
];

faultTable('preflight', cases);
