import writeFileAtomic from 'write-file-atomic';
import type { RunResult } from './schema.ts';

/**
 * Writes the result JSON atomically (a temporary file renamed into place), so a reader never sees
 * a half-written file, even when the process is interrupted while writing.
 */
export async function writeResultFile(path: string, result: RunResult): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(result, null, 2)}\n`);
}
