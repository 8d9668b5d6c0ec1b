import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { resolveK6Binary } from '../../src/k6/binary.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { runAction, startAction } from '../support/action.ts';
import {
  type CliRun,
  k6ProcessesUnder,
  leftovers,
  startCli,
  startCliUntil,
  tempDir,
  writeScript,
} from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';
import { cliOutcome as outcome } from './cli-outcome.ts';
import { type FaultCase, type FaultOutcome, faultTable } from './table.ts';

// The local backend's faults and hostile inputs, with the real CLI, real k6 runners and a real HTTP
// target on 127.0.0.1. A terminal's Ctrl-C is a SIGINT to the CLI's whole process group (the CLI
// is started detached, as a shell starts a foreground job in its own group).

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

const k6 = resolveK6Binary(undefined);

/** A 2-VU test of `duration` against the target (its URL comes with `-e TARGET=`). */
const load = (duration = '30s', extra = '') =>
  writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 2, duration: '${duration}' };
${extra}
export default function () { http.get(__ENV.TARGET + '/'); sleep(0.05); }
`);

/** Why an interrupted run's partial result lost data: each runner must have its summary. */
function partialResultLoss(run: CliRun): string | undefined {
  const result = run.result;
  if (!result) return 'no result written';
  const lost = result.runners.filter((r) => r.requests === undefined).map((r) => r.index);
  if (lost.length > 0 || result.failureKinds?.includes('incomplete'))
    return `runners ${lost.join(', ')} left no summary: ${result.failures.join('; ')}`;
  if (!((result.metrics.http_reqs?.values.count ?? 0) > 0)) return 'no request in the aggregate';
  return undefined;
}

/** A signal to the CLI's process group (a terminal's Ctrl-C) or to the CLI alone. */
function signal(pid: number, sig: NodeJS.Signals, to: 'group' | 'cli'): void {
  process.kill(to === 'group' ? -pid : pid, sig);
}

/** Interrupts a running 2-runner test 1.5 s after the start. */
function interruptedCase(name: string, sig: NodeJS.Signals, to: 'group' | 'cli', code: number): FaultCase {
  return {
    name,
    code,
    run: async () => {
      const { child, done } = await startCliUntil(
        ['run', load(), '-n', '2', '--', '-e', `TARGET=${target.url}`],
        'started 2 runners',
      );
      await new Promise((r) => setTimeout(r, 1500));
      signal(child.pid!, sig, to);
      const run = await done;
      return outcome(run, partialResultLoss(run));
    },
  };
}

/** The orchestrator dies (SIGKILL) while its runners are paused or running. */
function orphanCase(
  name: string,
  until: string,
  sig: NodeJS.Signals,
  code: number,
  k6Binary?: string,
): FaultCase {
  return {
    name,
    code,
    run: async () => {
      const args = ['run', load(), '-n', '2', ...(k6Binary ? ['--k6', k6Binary] : [])];
      const { child, done, tmp } = await startCliUntil([...args, '--', '-e', `TARGET=${target.url}`], until);
      // The runners exist (paused or running) before the orchestrator dies.
      await waitFor(() => k6ProcessesUnder(tmp).length >= 2, 'two runners', { timeoutMs: 30_000 });
      signal(child.pid!, sig, 'cli');
      const run = await done;
      return outcome(run);
    },
  };
}

/** A wrapper script that runs k6 as its child (no exec), as some installs do. */
function wrapper(): string {
  const file = path.join(tempDir('k6d-wrapper-'), 'k6-wrapper.sh');
  writeFileSync(file, `#!/bin/sh\n"${k6}" "$@"\nexit $?\n`);
  chmodSync(file, 0o755);
  return file;
}

/** A "k6" whose inspect prints no JSON. */
function fakeK6(): string {
  const file = path.join(tempDir('k6d-fake-'), 'k6');
  writeFileSync(
    file,
    `#!/bin/sh\ncase "$1" in\n  inspect) echo "hello from a fake k6"; exit 0;;\n  *) exec "${k6}" "$@";;\nesac\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

/** A case that must fail before any load: the CLI exits 2 with one line and starts no runner. */
function refusedCase(name: string, args: () => string[], message: RegExp, code = 2): FaultCase {
  return {
    name,
    code,
    message,
    run: async () => {
      const run = await startCli(args()).done;
      return outcome(
        run,
        run.stderr.includes('started') ? 'the load ran although the input was bad' : undefined,
      );
    },
  };
}

/** The run action (dist/run.js, as GitHub runs it) with backend local, for the table. */
async function actionOutcome(inputs: Record<string, string>, env: Record<string, string> = {}) {
  const tmp = tempDir('k6d-action-tmp-');
  const step = await runAction(
    'dist/run.js',
    { backend: 'local', ...inputs },
    { env: { ...env, TMPDIR: tmp } },
  );
  return {
    step,
    outcome: {
      code: step.code,
      // The step's error and warning annotations are what the user sees.
      stderr: step.annotations.join('\n'),
      leftovers: [...k6ProcessesUnder(tmp), ...leftovers(tmp)],
    } satisfies FaultOutcome,
  };
}

const quick = writeScript(
  `export const options = { vus: 1, iterations: 1 };\nexport default function () {}\n`,
);
const outDir = tempDir('k6d-out-');
mkdirSync(path.join(outDir, 'a-directory'));

faultTable('local faults', [
  interruptedCase(
    'Ctrl-C in the terminal after the start keeps every runner summary (130)',
    'SIGINT',
    'group',
    130,
  ),
  interruptedCase(
    'SIGTERM of the CLI after the start keeps every runner summary (130)',
    'SIGTERM',
    'cli',
    130,
  ),
  interruptedCase('SIGHUP of the CLI after the start keeps every runner summary (130)', 'SIGHUP', 'cli', 130),
  {
    name: 'Ctrl-C before the start exits 130 and leaves nothing',
    code: 130,
    message: /interrupted/,
    run: async () => {
      const { child, done } = await startCliUntil(
        ['run', load(), '-n', '2', '--', '-e', `TARGET=${target.url}`],
        'preflight ok',
      );
      signal(child.pid!, 'SIGINT', 'group');
      return outcome(await done);
    },
  },
  {
    name: 'Ctrl-C while k6 archive runs (the preflight) exits 130, not as a bad script',
    code: 130,
    message: /interrupted before the start/,
    run: async () => {
      // A k6 whose archive takes a second, and says when it begins: the Ctrl-C lands inside it.
      const dir = tempDir('k6d-slow-archive-');
      const mark = path.join(dir, 'archiving');
      const slowK6 = path.join(dir, 'k6');
      writeFileSync(
        slowK6,
        `#!/bin/sh\nif [ "$1" = archive ]; then touch "${mark}"; sleep 2; fi\nexec "${k6}" "$@"\n`,
      );
      chmodSync(slowK6, 0o755);
      const { child, done } = startCli(['run', load(), '-n', '2', '--k6', slowK6], { detached: true });
      await waitFor(() => existsSync(mark), 'k6 archive', { timeoutMs: 30_000, intervalMs: 20 });
      signal(child.pid!, 'SIGINT', 'group');
      return outcome(await done);
    },
  },
  {
    name: 'a second Ctrl-C kills at once, exits 130 and leaves no temp folder',
    code: 130,
    run: async () => {
      const { child, done } = await startCliUntil(
        ['run', load(), '-n', '2', '--', '-e', `TARGET=${target.url}`],
        'started 2 runners',
      );
      signal(child.pid!, 'SIGINT', 'group');
      await new Promise((r) => setTimeout(r, 50));
      signal(child.pid!, 'SIGINT', 'group');
      return outcome(await done);
    },
  },
  orphanCase('SIGKILL of the CLI while runners are paused leaves no runner', 'preflight ok', 'SIGKILL', 137),
  orphanCase('SIGKILL of the CLI while runners run leaves no runner', 'started 2 runners', 'SIGKILL', 137),
  // SIGHUP (a closed terminal) is an interruption: 130, as Ctrl-C.
  orphanCase('SIGHUP of the CLI while runners are paused leaves no runner', 'preflight ok', 'SIGHUP', 130),
  orphanCase(
    'SIGKILL of the CLI leaves no k6 that a wrapper script started',
    'started 2 runners',
    'SIGKILL',
    137,
    wrapper(),
  ),
  {
    name: 'Ctrl-C with k6 behind a wrapper script keeps the summaries and leaves no k6',
    code: 130,
    run: async () => {
      const { child, done } = await startCliUntil(
        ['run', load(), '-n', '2', '--k6', wrapper(), '--', '-e', `TARGET=${target.url}`],
        'started 2 runners',
      );
      await new Promise((r) => setTimeout(r, 1000));
      signal(child.pid!, 'SIGINT', 'group');
      const run = await done;
      return outcome(run, partialResultLoss(run));
    },
  },
  {
    name: '-e secrets reach the script, but no runner command line, archive or result',
    code: 0,
    run: async () => {
      const secret = `s3cr3t-${randomBytes(6).toString('hex')}`;
      // The script checks the value's shape: its source (in the archive) must not hold the secret.
      const script = writeScript(`
import { check, sleep } from 'k6';
export const options = { vus: 2, duration: '3s', thresholds: { checks: ['rate==1'] } };
export default function () { check(__ENV.TOKEN, { 'the secret arrived': (t) => /^s3cr3t-[0-9a-f]{12}$/.test(t) }); sleep(0.2); }
`);
      const { child, done, tmp } = await startCliUntil(
        ['run', script, '-n', '2', '--', '-e', `TOKEN=${secret}`],
        'started 2 runners',
      );
      // The user typed it on the CLI's own command line; the runners must not show it.
      const commandLines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes(secret) && !l.includes('bin.ts'));
      const archives = execFileSync('sh', ['-c', 'cat "$0"/k6-distributed-*/archive.tar', tmp], {
        encoding: 'latin1',
      });
      void child;
      const run = await done;
      const leaks = [
        ...commandLines.map((l) => `the secret on a command line: ${l.slice(0, 60)}`),
        ...(archives.length === 0 ? ['no archive found to check'] : []),
        ...(archives.includes(secret) ? ['the secret in the archive'] : []),
        ...(JSON.stringify(run.result ?? {}).includes(secret) ? ['the secret in the result'] : []),
      ];
      const o = await outcome(
        run,
        run.result?.thresholdsOk ? undefined : 'the script did not get the -e value',
      );
      return { ...o, leftovers: [...o.leftovers, ...leaks] };
    },
  },
  refusedCase(
    '-o into a folder that does not exist is refused before the load',
    () => ['run', quick, '-o', '/nonexistent-dir/x.json'],
    /error: --out: the folder \/nonexistent-dir does not exist/,
  ),
  refusedCase(
    '-o naming a directory is refused before the load',
    () => ['run', quick, '-o', path.join(outDir, 'a-directory')],
    /error: --out: .*a-directory is a directory/,
  ),
  refusedCase(
    '--report into a folder that does not exist is refused before the load',
    () => ['run', quick, '--report', '/nonexistent-dir/r.md'],
    /error: --report: the folder \/nonexistent-dir does not exist/,
  ),
  refusedCase(
    '--report naming the same file as -o is refused before the load',
    () => ['run', quick, '-o', path.join(outDir, 'same.json'), '--report', path.join(outDir, 'same.json')],
    /error: --report: .*same\.json is the same file as --out/,
  ),
  {
    name: 'backend local: env and secret-env reach the script; Pod-only inputs get one warning naming them',
    code: 0,
    message: /node-selector, resources: apply to Kubernetes runner Pods only; ignored with backend local/,
    run: async () => {
      const script = writeScript(`
import { check } from 'k6';
export const options = { vus: 2, iterations: 4, thresholds: { checks: ['rate==1'] } };
export default function () {
  check(__ENV, { 'env arrived': (e) => e.REGION === 'eu-west', 'secret-env arrived': (e) => e.API_TOKEN === 'tok-123' });
}
`);
      const { step, outcome: o } = await actionOutcome(
        {
          script,
          runners: '2',
          env: 'REGION=eu-west',
          'secret-env': 'API_TOKEN=api-secrets/token',
          'node-selector': 'pool=load',
          resources: '{requests: {cpu: "1"}}',
        },
        { API_TOKEN: 'tok-123' },
      );
      return {
        ...o,
        ...(step.outputs['thresholds-ok'] === 'true'
          ? {}
          : { dataLost: 'the script did not get env/secret-env' }),
      };
    },
  },
  {
    name: 'a cancelled run action (SIGINT) keeps every runner summary in its result and fails in one line',
    code: 1,
    message: /interrupted: the run was cancelled and every runner was stopped/,
    run: async () => {
      const tmp = tempDir('k6d-action-tmp-');
      const { child, done, workspace } = startAction(
        'dist/run.js',
        { backend: 'local', script: load(), runners: '2', 'k6-args': `-e TARGET=${target.url}` },
        { env: { TMPDIR: tmp }, detached: true },
      );
      let stdout = '';
      child.stdout!.on('data', (d) => {
        stdout += d;
      });
      await waitFor(() => stdout.includes('started 2 runners'), 'the start', {
        timeoutMs: 60_000,
        intervalMs: 50,
      });
      await new Promise((r) => setTimeout(r, 1500));
      // To the step's whole process group, as a cancelled job's SIGINT reaches every process of it.
      signal(child.pid!, 'SIGINT', 'group');
      const step = await done;
      let dataLost: string | undefined;
      try {
        const result = JSON.parse(
          readFileSync(path.join(workspace, 'k6-distributed-result.json'), 'utf8'),
        ) as RunResult;
        dataLost = partialResultLoss({ code: step.code, stdout: '', stderr: '', tmp, result });
      } catch {
        dataLost = 'no result written';
      }
      return {
        code: step.code,
        stderr: step.annotations.filter((a) => a.startsWith('::error')).join('\n'),
        leftovers: [...k6ProcessesUnder(tmp), ...leftovers(tmp)],
        ...(dataLost ? { dataLost } : {}),
      };
    },
  },
  {
    name: 'backend local: a secret-env the step does not have is refused in one line',
    code: 1,
    message:
      /secret-env: API_TOKEN names the Kubernetes Secret api-secrets\/token, which backend local cannot read/,
    run: async () =>
      (await actionOutcome({ script: quick, 'secret-env': 'API_TOKEN=api-secrets/token' })).outcome,
  },
  refusedCase(
    '-o naming the script itself is refused before the load',
    () => ['run', quick, '-o', quick],
    /error: --out: .* is the same file as <script> /,
  ),
  {
    name: 'a --report write that fails after the run keeps the result and says so in one line',
    code: 1,
    message: /error: --report: could not write \/dev\/full: ENOSPC.*; the result is in /,
    run: async () => {
      const run = await startCli(['run', quick, '--report', '/dev/full']).done;
      return outcome(run, run.result ? undefined : 'no result written');
    },
  },
  refusedCase('-n "" is refused', () => ['run', quick, '-n', ''], /error: --runners: is empty/),
  refusedCase(
    '-n 0x2 is refused',
    () => ['run', quick, '-n', '0x2'],
    /error: --runners: must be a whole number/,
  ),
  refusedCase(
    '--grace 1e3 is refused',
    () => ['run', quick, '--grace', '1e3'],
    /error: --grace: must be a number of seconds/,
  ),
  refusedCase(
    'a script that is a directory gives one line',
    () => ['run', outDir],
    /error: script: .* is a directory, not a k6 script/,
  ),
  refusedCase(
    'a k6 whose inspect prints no JSON gives one line',
    () => ['run', quick, '--k6', fakeK6()],
    /error: k6 binary: .* inspect printed no JSON options/,
  ),
  refusedCase(
    'an -e without a value is refused',
    () => ['run', quick, '--', '-e', 'TOKEN'],
    /error: k6 args: -e TOKEN: must be NAME=value/,
  ),
]);
