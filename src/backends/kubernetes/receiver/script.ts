import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * The interval receiver's program (receiver/main.ts) as one JavaScript file, for the run's
 * ConfigMap: dist/interval-receiver.cjs, built by scripts/build.mjs beside the bundle that runs
 * (dist/cli.js, dist/run.js, or a chunk one folder below). Run from the TypeScript sources (tests,
 * `node src/…`), it is bundled now with esbuild (a dev dependency), so it is never stale there.
 */

/** The receiver's file name in dist/ and in the run's ConfigMap. */
export const RECEIVER_FILE = 'interval-receiver.cjs';

let cached: Promise<string> | undefined;

/**
 * The receiver's program text (cached).
 * @throws Error when neither dist/interval-receiver.cjs is found beside the running bundle nor
 *   esbuild can bundle it from the sources.
 */
export function receiverScript(): Promise<string> {
  cached ??= load();
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}

async function load(): Promise<string> {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) {
    for (const candidate of [`./${RECEIVER_FILE}`, `../${RECEIVER_FILE}`]) {
      const text = await readFile(new URL(candidate, here), 'utf8').catch(() => undefined);
      if (text !== undefined) return text;
    }
    throw new Error(`${RECEIVER_FILE} is missing beside ${fileURLToPath(here)}`);
  }
  // The sources: bundle main.ts as scripts/build.mjs does (a variable name, so that a bundle of
  // this file does not take esbuild in).
  const name = 'esbuild';
  const esbuild = (await import(name)) as typeof import('esbuild');
  const built = await esbuild.build(receiverBuildOptions(fileURLToPath(new URL('./main.ts', here))));
  return built.outputFiles![0]!.text;
}

/**
 * The esbuild options of the receiver's bundle (scripts/build.mjs builds the same): one CommonJS
 * file for Node 20 and later (CommonJS: `node file.cjs` runs it without a package.json, and
 * snappyjs is CommonJS), its dependencies (snappyjs, @bufbuild/protobuf) inside.
 */
export function receiverBuildOptions(entry: string) {
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node' as const,
    target: 'node20',
    format: 'cjs' as const,
    minify: true,
    legalComments: 'none' as const,
    logLevel: 'warning' as const,
    write: false,
  };
}
