import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLogTail } from '../../../../src/backends/local/backend.ts';
import { tempDir } from '../../../support/cli.ts';

// A runner's log tail is read from the end of its log: a chatty script's log can be gigabytes
// (issue: 1.87 GB RSS to get 15 lines).

describe("a runner's log tail", () => {
  it('is the last lines of a long log, whole', async () => {
    const file = path.join(tempDir(), 'runner-0.log');
    const lines = Array.from({ length: 200_000 }, (_, i) => `level=info msg="line ${i}" source=console`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect(await readLogTail(file, 3)).toBe(lines.slice(-3).join('\n'));
  });

  it('finds the tail behind a line longer than the first read', async () => {
    const file = path.join(tempDir(), 'runner-0.log');
    writeFileSync(file, `first\n${'x'.repeat(200_000)}\nlast\n`);
    expect(await readLogTail(file, 2)).toBe(`${'x'.repeat(200_000)}\nlast`);
  });

  it('is the whole of a short log, and empty for a missing one', async () => {
    const file = path.join(tempDir(), 'runner-0.log');
    writeFileSync(file, 'one\ntwo\n');
    expect(await readLogTail(file, 15)).toBe('one\ntwo');
    expect(await readLogTail(path.join(tempDir(), 'none.log'), 15)).toBe('');
  });
});
