import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandScripts, scriptResultPath } from '../../../src/inputs/scripts.ts';
import { tempDir } from '../../support/cli.ts';

function workspace(files: string[]): string {
  const dir = tempDir('k6d-scripts-');
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), '');
  }
  return dir;
}

describe('expandScripts', () => {
  it('keeps one plain path as written, even when it does not exist (preflight names it)', async () => {
    expect(await expandScripts('load/api.js', workspace([]))).toEqual(['load/api.js']);
  });

  it('expands globs sorted, keeps line order, and runs a script named twice once', async () => {
    const cwd = workspace(['load/b.js', 'load/a.js', 'load/deep/c.js', 'other.js']);
    expect(await expandScripts('other.js\nload/*.js\n\nload/a.js\n', cwd)).toEqual([
      'other.js',
      'load/a.js',
      'load/b.js',
    ]);
    expect(await expandScripts('load/**/*.js', cwd)).toEqual(['load/a.js', 'load/b.js', 'load/deep/c.js']);
  });

  it.each([
    ['nothing/*.js', 'script: "nothing/*.js" matches no file'],
    ['  \n ', 'script: is required'],
  ])('refuses %j before any load', async (text, message) => {
    await expect(expandScripts(text, workspace([]))).rejects.toThrow(message);
  });
});

describe('scriptResultPath', () => {
  it.each([
    ['k6-distributed-result.json', 'load/api.js', 'k6-distributed-result-load-api.js.json'],
    ['out/r.json', './load/a b.js', path.join('out', 'r-load-a-b.js.json')],
    ['result', 'x.js', 'result-x.js.json'],
  ])('%s + %s → %s', (resultPath, script, expected) => {
    expect(scriptResultPath(resultPath, script)).toBe(expected);
  });
});
