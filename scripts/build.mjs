// Builds dist/: one ESM bundle per entry, in two builds that share nothing, so the npm package
// carries only what the CLI loads (package.json `files`: dist/cli.js and dist/cli-chunks/):
// - the CLI for the oldest Node it runs on (node20); its Kubernetes client is a chunk of its own,
//   loaded only for `--backend kubernetes` (src/cli/kubernetes.ts);
// - the GitHub Actions for their runtime, node24 (action.yml `runs.using`).
// `node scripts/build.mjs --check` rebuilds in memory and fails when dist/ differs (stale dist).
import { chmod, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** The builds: their entries, the Node they target, and where their shared chunks go. */
export const builds = [
  { entries: { cli: 'src/cli/bin.ts' }, target: 'node20', chunks: 'cli-chunks' },
  {
    entries: {
      run: 'src/actions/run/main.ts',
      'run-post': 'src/actions/run/post.ts',
      report: 'src/actions/report/main.ts',
      main: 'src/actions/run-and-report/main.ts',
    },
    target: 'node24',
    chunks: 'chunks',
  },
];
/**
 * The interval receiver of the runner Pods (src/backends/kubernetes/receiver/main.ts): one
 * CommonJS file that a Node image runs from the run's ConfigMap; its options are the ones
 * receiver/script.ts uses when it bundles from the sources.
 */
export const receiver = {
  entry: 'src/backends/kubernetes/receiver/main.ts',
  out: 'dist/interval-receiver.cjs',
};
export const entries = Object.assign({}, ...builds.map((b) => b.entries));

export async function build({ write, metafile = false }) {
  const results = [];
  for (const { entries, target, chunks } of builds) {
    results.push(
      await esbuild.build({
        absWorkingDir: root,
        entryPoints: entries,
        outdir: 'dist',
        bundle: true,
        platform: 'node',
        target,
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
        // Shared chunks for the code the entries have in common (and the CLI's on-demand
        // Kubernetes part), minified: dist/ is committed.
        splitting: true,
        chunkNames: `${chunks}/[name]-[hash]`,
        minify: true,
        logLevel: 'warning',
        metafile,
        write,
      }),
    );
  }
  results.push(
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: [receiver.entry],
      outfile: receiver.out,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      minify: true,
      legalComments: 'none',
      logLevel: 'warning',
      metafile,
      write,
    }),
  );
  return {
    files: results.flatMap((r) => r.outputFiles ?? []),
    metafiles: results.map((r) => r.metafile),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  if (!check) await rm(path.join(root, 'dist'), { recursive: true, force: true });
  const { files } = await build({ write: !check });
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
