import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

describe('dist/', () => {
  it('is what esbuild builds from src/ now (run `npm run build` and commit dist/ when this fails)', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const out = execFileSync(process.execPath, ['scripts/build.mjs', '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(out).toContain('dist/ is up to date');
  });
});
