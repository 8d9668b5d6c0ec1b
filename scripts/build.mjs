// Builds dist/: one ESM bundle per entry, for the Actions runtime node24.
// `node scripts/build.mjs --check` rebuilds in memory and fails when dist/ differs (stale dist).
import { chmod, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const entries = {
  cli: 'src/cli/bin.ts',
  run: 'src/actions/run/main.ts',
  'run-post': 'src/actions/run/post.ts',
  report: 'src/actions/report/main.ts',
  main: 'src/actions/run-and-report/main.ts',
};

export async function build({ write }) {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: entries,
    outdir: 'dist',
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    // ESM bundles of CommonJS dependencies need require(); see STYLE.md.
    banner: {
      js: [
        '#!/usr/bin/env node',
        "import { createRequire as __k6dCreateRequire } from 'node:module';",
        "import { fileURLToPath as __k6dFileURLToPath } from 'node:url';",
        'const require = __k6dCreateRequire(import.meta.url);',
        'const __filename = __k6dFileURLToPath(import.meta.url);',
        "const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));",
      ].join('\n'),
    },
    legalComments: 'none',
    // One shared chunk for the code the entries have in common, minified: dist/ is committed.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    minify: true,
    logLevel: 'warning',
    write,
  });
  return result.outputFiles ?? [];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  if (!check) await rm(path.join(root, 'dist'), { recursive: true, force: true });
  const files = await build({ write: !check });
  if (!check) await chmod(path.join(root, 'dist', 'cli.js'), 0o755);
  if (check) {
    const stale = [];
    for (const file of files) {
      const committed = await readFile(file.path, 'utf8').catch(() => '');
      if (committed !== file.text) stale.push(path.relative(root, file.path));
    }
    const expected = new Set(files.map((f) => path.relative(root, f.path)));
    const present = (await readdir(path.join(root, 'dist'), { recursive: true, withFileTypes: true }))
      .filter((d) => d.isFile())
      .map((d) => path.relative(root, path.join(d.parentPath, d.name)));
    for (const extra of present) if (!expected.has(extra)) stale.push(`${extra} (not built any more)`);
    if (stale.length > 0) {
      console.error(`dist/ is stale (${stale.join(', ')}): run \`npm run build\` and commit dist/`);
      process.exit(1);
    }
    console.log('dist/ is up to date');
  }
}
