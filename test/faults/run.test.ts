import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startCli, startCliUntil, tempDir, writeScript } from '../support/cli.ts';
import { cliOutcome as outcome } from './cli-outcome.ts';
import { faultTable } from './table.ts';

// Run-time rough edges of the local backend (issue 25), with the real CLI and real k6 runners: an
// interruption after the test, a work folder removed mid-run, setup() that times out, and what is
// said of setup() for a script without one. `outcome`'s second argument is what a case found
// wrong in the files the run wrote.

const quick = writeScript(
  `export const options = { vus: 1, iterations: 1 };\nexport default function () {}\n`,
);

faultTable('run-time faults', [
  {
    name: 'Ctrl-C while the reports are written exits 130 and says the complete result passed',
    code: 130,
    message:
      /interrupted while the reports were written, after the test had ended: the result in .*r\.json is complete and says passed; exit 130 because the run was interrupted/,
    run: async () => {
      const dir = tempDir('k6d-late-int-');
      const fifo = path.join(dir, 'report.md');
      execFileSync('mkfifo', [fifo]);
      const out = path.join(dir, 'r.json');
      // The --report write blocks on the FIFO until it is read: the Ctrl-C lands inside it.
      const { child, done } = await startCliUntil(
        ['run', quick, '-o', out, '--report', fifo],
        'HTML report written',
      );
      process.kill(-child.pid!, 'SIGINT');
      await new Promise((r) => setTimeout(r, 200));
      const report = readFileSync(fifo, 'utf8');
      const run = await done;
      const result = JSON.parse(readFileSync(out, 'utf8')) as { verdict: string };
      return outcome(
        run,
        result.verdict !== 'passed' || !report.includes('passed')
          ? `result ${result.verdict}, report: ${report.slice(0, 80)}`
          : undefined,
      );
    },
  },
  {
    name: 'a work folder removed during the run (a tmp cleaner) is named in one line',
    code: 1,
    run: async () => {
      const script = writeScript(`
import { sleep } from 'k6';
export const options = { vus: 2, duration: '3s' };
export default function () { sleep(0.05); }
`);
      const { done, tmp } = await startCliUntil(['run', script, '-n', '2'], 'started 2 runners');
      for (const f of readdirSync(tmp).filter((f) => f.startsWith('k6-distributed-')))
        rmSync(path.join(tmp, f), { recursive: true, force: true });
      const run = await done;
      // The failures are the report's (stdout) and the result's lines.
      const lines = run.result?.failures ?? [];
      const said =
        /the work folder .*k6-distributed-\w+ was removed during the run \(a tmp cleaner\?\): the runners' summaries were in it; runner 0, 1 are missing from the aggregate/;
      return outcome(
        run,
        lines.length === 1 && said.test(lines[0]!) && said.test(run.stdout.replaceAll('\\', ''))
          ? undefined
          : `not one line naming the folder: ${lines.join(' | ')}`,
      );
    },
  },
  {
    name: 'setup() past setupTimeout exits 100 and writes the partial result',
    code: 100,
    // The runners are ended at once (SIGTERM), not after the 30 s stop timeout.
    timeoutMs: 20_000,
    run: async () => {
      const script = writeScript(`
import { sleep } from 'k6';
import { Counter } from 'k6/metrics';
const setups = new Counter('setup_calls');
export const options = { vus: 2, iterations: 4, setupTimeout: '1s' };
export function setup() { setups.add(1); sleep(3); }
export default function () {}
`);
      const run = await startCli(['run', script, '-n', '2']).done;
      const r = run.result;
      const problem = !r
        ? 'no result written'
        : r.verdict !== 'failed' || r.k6ExitCode !== 100 || r.failureKinds?.[0] !== 'runner'
          ? `result ${r.verdict}, k6ExitCode ${r.k6ExitCode}, kinds ${r.failureKinds}`
          : !/runner 0: setup\(\) failed \(exit 100: setup\(\) timed out\)/.test(r.failures[0] ?? '')
            ? `failure: ${r.failures[0]}`
            : r.metrics.setup_calls?.values.count !== 1
              ? "setup()'s counter is not in the aggregate"
              : undefined;
      return outcome(run, problem);
    },
  },
  {
    name: 'a script without setup() or teardown() is not said to have run them',
    code: 0,
    run: async () => {
      const run = await startCli(['run', quick, '-n', '1']).done;
      const said = run.stderr.split('\n').filter((l) => /(setup|teardown)\(\)/.test(l));
      return outcome(run, said.length > 0 ? `said: ${said.join(' | ')}` : undefined);
    },
  },
]);
