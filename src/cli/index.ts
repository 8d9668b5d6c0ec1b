import { CommanderError } from 'commander';
import { ConfigurationError, errorMessage, exitCodeFor, RunError } from '../errors.ts';
import { buildProgram, stderrLog } from './program.ts';

/**
 * The CLI's entry: parses the arguments, runs the command and turns its outcome into the exit
 * code: a finished run's failure kinds, or the kind of the RunError thrown before a result
 * existed ({@link exitCodeFor}); a usage error exits 2; anything else is a bug, shown with its stack.
 */

/** Runs the CLI; resolves with the process exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof RunError) {
      stderrLog.error(errorMessage(error));
      // k6 refused the script or its options (104, 107): exit as a plain `k6 run` would.
      return (error instanceof ConfigurationError && error.k6ExitCode) || exitCodeFor([error.kind]);
    }
    process.stderr.write(`[k6-distributed] error: ${error instanceof Error ? error.stack : String(error)}\n`);
    return 1;
  }
}
