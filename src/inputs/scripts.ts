import { glob } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from '../errors.ts';

/**
 * Several scripts in one step (issue #14 item 9): the `script` input names one script per line,
 * and a line with a glob character (`*`, `?`, `[`, `{`) is a pattern (Node's `fs.glob`, the
 * syntax of `minimatch`: `**` crosses folders). Each line's matches are sorted; a script named
 * twice runs once; the order of the lines is the order of the runs.
 */

const GLOB_CHARS = /[*?[{]/;

/**
 * The scripts the `script` input names, relative paths kept as the user wrote or matched them.
 * @param text the input as written (one path or pattern per line; blank lines ignored).
 * @param cwd the folder patterns are matched in (the workspace).
 * @throws ConfigurationError `script: "<pattern>" matches no file` before any load starts.
 */
export async function expandScripts(text: string, cwd: string): Promise<string[]> {
  const scripts: string[] = [];
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line) continue;
    if (!GLOB_CHARS.test(line)) {
      scripts.push(line);
      continue;
    }
    const matches: string[] = [];
    for await (const match of glob(line, { cwd })) matches.push(match);
    if (matches.length === 0) throw new ConfigurationError(`script: "${line}" matches no file`);
    scripts.push(...matches.sort());
  }
  if (scripts.length === 0) throw new ConfigurationError('script: is required');
  return [...new Set(scripts)];
}

/** A script's path made file-name safe: `./tests/api.js` → `tests-api.js`. */
function scriptSlug(script: string): string {
  return script
    .replace(/^(\.\/)+/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * The result file of one script when a step runs several: `<result-path without .json>-<script>.json`
 * with the script's path made file-name safe (`tests/api.js` → `k6-distributed-result-tests-api.js.json`),
 * so that each script always writes the same file and the report finds its own baseline by it.
 */
export function scriptResultPath(resultPath: string, script: string): string {
  const parsed = path.parse(resultPath);
  const ext = parsed.ext || '.json';
  return path.join(parsed.dir, `${parsed.name}-${scriptSlug(script)}${ext}`);
}

/**
 * The report key of one script when a step reports several: `<key>-<script>` (`default` and
 * `load/api.js` → `default-load-api.js`). Each script's baseline is stored and looked up under it
 * (artifact `k6-distributed-baseline-default-load-api.js`), so each is compared with its own.
 */
export function scriptKey(key: string, script: string): string {
  return `${key}-${scriptSlug(script)}`;
}
