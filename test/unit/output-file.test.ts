import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { outputKind, writeOutputFile } from '../../src/output-file.ts';

// A real full disk: a tmpfs of 8 KiB (two pages) mounted for this file. Mounting needs root, as
// CI and the developers' machines are; elsewhere these cases are skipped, and the reason is the
// test's name.
const root = process.getuid?.() === 0;
let dir: string;
let full: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'k6d-output-file-'));
  full = path.join(dir, 'full');
  if (root) {
    execFileSync('mkdir', [full]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8k', 'tmpfs', full]);
  }
});
afterAll(() => {
  if (root) execFileSync('umount', [full]);
  rmSync(dir, { recursive: true, force: true });
});

describe('writeOutputFile', () => {
  it('writes a regular file whole and leaves no temporary file', async () => {
    const file = path.join(dir, 'r.json');
    await writeOutputFile(file, 'x'.repeat(100_000));
    expect(readFileSync(file, 'utf8')).toHaveLength(100_000);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it.runIf(root)(
    'rejects a write that does not fit (ENOSPC) and keeps the previous file as it was',
    async () => {
      const file = path.join(full, 'r.json');
      writeFileSync(file, 'previous');
      // 13,000 bytes with about 4 KiB free: write-file-atomic 8.0.0 resolved here with 4,096 bytes on disk.
      await expect(writeOutputFile(file, 'y'.repeat(13_000))).rejects.toThrow(
        `could not write ${file}: ENOSPC`,
      );
      expect(readFileSync(file, 'utf8')).toBe('previous');
      expect(readdirSync(full)).toEqual(['r.json']);
    },
  );

  // A private node of /dev/null's device (1, 3) in this test's folder: were the write ever to rename
  // over it again, only this node would be replaced, not the machine's /dev/null.
  it.runIf(root)('writes a character device in place: it stays a device (as /dev/null must)', async () => {
    const device = path.join(dir, 'null');
    execFileSync('mknod', ['-m', '666', device, 'c', '1', '3']);
    expect(await outputKind(device)).toBe('stream');
    await writeOutputFile(device, '{"result":1}\n');
    expect(statSync(device).isCharacterDevice()).toBe(true);
    expect(readdirSync(dir).filter((f) => f.startsWith('.null') || f.startsWith('null.'))).toEqual([]);
  });

  it('writes a FIFO in place, so a reader at its other end gets the text', async () => {
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const cat = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    let read = '';
    cat.stdout.on('data', (d) => {
      read += d;
    });
    const ended = new Promise((resolve) => cat.on('close', resolve));
    onTestFinished(() => {
      cat.kill();
    });
    expect(await outputKind(fifo)).toBe('stream');
    await writeOutputFile(fifo, 'through the pipe\n');
    await ended;
    expect(read).toBe('through the pipe\n');
    expect(statSync(fifo).isFIFO()).toBe(true);
  }, 10_000);

  it('names the file and the reason when the folder is gone', async () => {
    const file = path.join(dir, 'gone', 'r.json');
    await expect(writeOutputFile(file, 'z')).rejects.toThrow(`could not write ${file}: ENOENT`);
  });
});
