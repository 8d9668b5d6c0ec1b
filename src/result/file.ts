import os from 'node:os';
import path from 'node:path';
import { RunError } from '../errors.ts';
import { writeOutputFile } from '../output-file.ts';
import type { RunResult } from './schema.ts';

/** The result as the file holds it: 2-space JSON with a final newline. */
function resultText(result: RunResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}

/**
 * Writes the result JSON atomically (src/output-file.ts: a temporary file renamed into place, its
 * size checked), so a reader never sees a half-written file, even when the process is interrupted
 * while writing, and a full disk never passes for a written result.
 * @throws Error `could not write <path>: <reason>`; the previous file at `path` is left as it was.
 */
export async function writeResultFile(path: string, result: RunResult): Promise<void> {
  await writeOutputFile(path, resultText(result));
}

/**
 * Writes the result to `file`, or, when that fails (a full disk, a folder removed during the run),
 * keeps it in the temporary folder and fails the run saying where: a result is never lost silently.
 * @param input the input or flag that named `file` (`--out`, `result-path`), for the message.
 * @throws RunError `incomplete`: `--out: could not write r.json: ENOSPC: …; the result was kept in
 *   /tmp/k6-distributed-result-<run>.json` (or `…; it could not be kept anywhere: <reason>`).
 */
export async function writeResultOrKeep(file: string, result: RunResult, input: string): Promise<void> {
  try {
    await writeResultFile(file, result);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const kept = path.join(
      os.tmpdir(),
      `k6-distributed-result-${result.runId ?? Date.now().toString(36)}.json`,
    );
    const where = await writeOutputFile(kept, resultText(result)).then(
      () => `the result was kept in ${kept}`,
      (keepError: unknown) =>
        `it could not be kept anywhere: ${keepError instanceof Error ? keepError.message : String(keepError)}`,
    );
    throw new RunError('incomplete', `${input}: ${reason}; ${where}`);
  }
}
