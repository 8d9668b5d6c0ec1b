import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { writeOutputFile } from '../../output-file.ts';
import { type JUnitRun, renderJUnit } from '../../render/junit.ts';

/**
 * Writes the step's JUnit report (src/render/junit.ts) to the `junit-path` input, when given: one
 * script's suites, or every script's in one file; with a comparison (the report action on a pull
 * request) its gated metrics too.
 * @param log where the line that says so goes (`info`), or why it could not be written (`warning`).
 * @returns its path, or '' when not asked for or when it could not be written: the results stand,
 *   as for the HTML report.
 */
export async function writeJUnitReport(
  file: string | undefined,
  runs: readonly JUnitRun[],
  log: Pick<Logger, 'info' | 'warning'>,
): Promise<string> {
  if (!file) return '';
  try {
    await writeOutputFile(file, renderJUnit(runs));
    log.info(`JUnit report written to ${file}`);
    return file;
  } catch (error) {
    log.warning(`junit-path: could not write the JUnit report: ${errorMessage(error)}`);
    return '';
  }
}
