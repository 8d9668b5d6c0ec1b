import { type CliRun, k6ProcessesUnder, leftovers } from '../support/cli.ts';
import { type FaultOutcome, shellExitCode } from './table.ts';

// What a case of the CLI leaves and how it ended, for the fault tables of the local backend
// (local.test.ts, run.test.ts).

/** Everything a case leaves: k6 (or wrapper) processes of the run, files in its TMPDIR. */
export async function leftBehind(run: CliRun, marker = run.tmp): Promise<string[]> {
  // The watchdog needs a moment after its orchestrator died; a clean run needs none.
  const end = Date.now() + 5000;
  let left: string[] = [];
  for (;;) {
    left = [...k6ProcessesUnder(marker), ...leftovers(run.tmp).map((f) => `${run.tmp}/${f}`)];
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The CLI's outcome for the table: `dataLost` says why collected data was lost, `marker` names its processes (default its TMPDIR). */
export async function cliOutcome(run: CliRun, dataLost?: string, marker?: string): Promise<FaultOutcome> {
  return {
    code: shellExitCode(run.code, run.signal ?? null),
    stderr: run.stderr,
    leftovers: await leftBehind(run, marker),
    ...(dataLost ? { dataLost } : {}),
  };
}
