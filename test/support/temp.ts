import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Every folder tempDir made in this worker and not yet removed. */
const made = new Set<string>();

/**
 * A fresh folder in os.tmpdir() for one test. It is removed after the test file
 * (test/support/remove-temp-dirs.ts, a setup file of every vitest project), so a test may keep a
 * folder at file scope.
 */
export function tempDir(prefix = 'k6d-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes every folder tempDir made so far (also what a test's processes left in them). */
export function removeTempDirs(): void {
  for (const dir of made) {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    made.delete(dir);
  }
}
