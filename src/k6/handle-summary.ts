import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log.ts';
import type { SummaryData } from '../result/schema.ts';
import { SUMMARY_DATA_ENV, summaryModule } from './entry.ts';
import { k6ErrorLine } from './log.ts';

/**
 * handleSummary() once, on the global data (issue #9, docs/equivalence-plan.md): after the
 * aggregation, on the machine that runs the CLI or the action (where a plain `k6 run` writes its
 * files), one k6 process runs the summary module of entry.ts, whose `handleSummary` calls the
 * user's with the whole test's data object read from a file. k6 itself then writes what the user's
 * function returns: files relative to the working folder, `stdout`, `stderr`, as a plain run does.
 * The runners never run the user's function (their entry module overrides it).
 *
 * What we chose, and why: k6 cannot be handed a summary from outside, but a k6 process can import
 * the user's module and call its exported function; its own single empty iteration is never
 * reported, since the module's handleSummary replaces k6's output. The user's init code runs once
 * more, as it does in a plain run for the summary.
 */

/** Flags that change how the script's code runs, with whether they take a value. */
const CODE_FLAGS: Record<string, boolean> = {
  '-e': true,
  '--env': true,
  '--secret-source': true,
  '--compatibility-mode': true,
  '--include-system-env-vars': false,
};

/**
 * The user's k6 flags the summary process needs so the script's code runs as it did on the
 * runners: `-e`/`--env` (`__ENV`), `--secret-source`, `--compatibility-mode`,
 * `--include-system-env-vars`, in the forms `--flag value` and `--flag=value`.
 */
export function summaryProcessFlags(k6Args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < k6Args.length; i++) {
    const arg = k6Args[i]!;
    const flag = arg.split('=')[0]!;
    if (!(flag in CODE_FLAGS)) continue;
    out.push(arg);
    if (CODE_FLAGS[flag] && !arg.includes('=') && i + 1 < k6Args.length) out.push(k6Args[++i]!);
  }
  return out;
}

/** Options of {@link runHandleSummary}. */
export interface HandleSummaryOptions {
  k6Binary: string;
  /** The user's script (not an archive). */
  script: string;
  /** The global data object (`RunResult.summary`). */
  data: SummaryData;
  /** A private folder for the module and the data file. */
  workDir: string;
  /** The folder k6 writes the returned files into (a plain run's working folder). Default: this process's. */
  cwd?: string;
  /** The user's k6 flags: those that shape how the script's code runs are given again ({@link summaryProcessFlags}). */
  k6Args: readonly string[];
  /** `handleSummaryTimeout` of the script (`k6 inspect`), if set. */
  handleSummaryTimeout?: string;
  log: Logger;
  /** Where k6's `stdout` output goes. Default: this process's stdout. */
  stdout?: NodeJS.WritableStream;
  /** Where k6's `stderr` output and log lines go. Default: this process's stderr. */
  stderr?: NodeJS.WritableStream;
}

/**
 * Runs the user's `handleSummary(data)` once with the global data. When it throws, k6 logs the
 * error (with the script's stack) at level error, and a plain run goes on and exits as it would have
 * (the exit code is not changed): the same here, the log line is passed through and one warning is
 * logged; k6's fallback text summary, which would describe the empty iteration of the module and not
 * the test, is dropped.
 * @returns `true` when the user's function ran without error.
 */
export async function runHandleSummary(options: HandleSummaryOptions): Promise<boolean> {
  const dataFile = path.join(options.workDir, 'k6-distributed-summary-data.json');
  const module = path.join(options.workDir, 'k6-distributed-summary.js');
  await writeFile(dataFile, JSON.stringify(options.data));
  await writeFile(
    module,
    summaryModule({
      script: options.script,
      ...(options.handleSummaryTimeout ? { handleSummaryTimeout: options.handleSummaryTimeout } : {}),
    }),
  );
  const child = spawn(
    options.k6Binary,
    [
      'run',
      '--quiet',
      '--no-setup',
      '--no-teardown',
      '--no-usage-report',
      '--no-thresholds',
      ...summaryProcessFlags(options.k6Args),
      '-e',
      `${SUMMARY_DATA_ENV}=${dataFile}`,
      module,
    ],
    {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, K6_NO_USAGE_REPORT: 'true' },
      // Piped and passed through, so that k6's fallback text summary after a throw (it would
      // describe the module's empty iteration, not the test) can be dropped; `data.state` says
      // whether our own stdout and stderr are terminals.
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  // A throw in the user's handleSummary is logged by k6 with hint="script exception"; the run
  // itself still ends with 0.
  const failed = code !== 0 || /level=error/.test(err);
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  if (!failed) stdout.write(out);
  stderr.write(err);
  if (failed) options.log.warning(`handleSummary() failed: ${k6ErrorLine(err) || `k6 exited with ${code}`}`);
  return !failed;
}
