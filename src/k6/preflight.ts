import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigurationError } from '../errors.ts';
import { k6ErrorLine } from './log.ts';
import { parseThresholds, type Threshold } from './thresholds.ts';

const run = promisify(execFile);

/**
 * Preflight: everything that can be checked before a runner starts. The script is bundled with
 * `k6 archive` (so every runner runs the same code, and the user's option flags are baked into the
 * archive) and read back with `k6 inspect --execution-requirements`, which prints the consolidated
 * options with `thresholds`, `scenarios`, `maxVUs` and `totalDuration`.
 */

/** What preflight learnt. */
export interface Preflight {
  /** Path of the k6 archive (tar) every runner runs. */
  archivePath: string;
  /** `k6 version`'s version, e.g. `v2.2.0`. */
  k6Version: string;
  /** sha256 of the script file, hex. */
  scriptHash: string;
  /** The parsed thresholds of the script (and of the user's flags). */
  thresholds: Threshold[];
  /** The most VUs the test uses at once. */
  maxVUs: number;
  /** The longest the test can run, from the executors' durations and graceful stops, in s. */
  totalDurationS: number;
  /** `options.tags`, the test-wide tags. */
  tags: Record<string, string>;
  /** Flags only `k6 run` takes (`--out`, `--linger` is refused, `--features`), passed to every runner. */
  runArgs: string[];
  /** The consolidated options as `k6 inspect` printed them. */
  options: Record<string, unknown>;
}

/** Flags this product sets on every runner; a user giving one would break the distribution. */
const RESERVED_FLAGS: Record<string, string> = {
  '--execution-segment': 'each runner gets its own segment',
  '--execution-segment-sequence': 'the sequence is set from the number of runners',
  '--paused': 'runners always start paused and are started together',
  '-p': 'runners always start paused and are started together',
  '--address': 'each runner gets its own REST API address',
  '-a': 'each runner gets its own REST API address',
  '--summary-export': 'each runner writes its summary where the aggregator reads it',
  '--summary-trend-stats': 'runners report a quantile grid for the global percentiles',
  '--linger': 'runners must exit when their segment is done',
  '-l': 'runners must exit when their segment is done',
  '--archive-out': 'the archive is written by the preflight',
  '-O': 'the archive is written by the preflight',
  '--no-thresholds': 'thresholds are judged globally by the aggregator',
};

/** Flags that `k6 run` takes and `k6 archive` does not, with whether they take a value. */
const RUN_ONLY_FLAGS: Record<string, boolean> = {
  '--out': true,
  '-o': true,
  '--no-usage-report': false,
  '--features': true,
};

/** Flags given to both: `k6 run` of an archive lets the runner's own environment win over the
 * archive's `-e` values, unlike `k6 run script.js`, so they are passed again to keep `-e` first. */
const BOTH_FLAGS = new Set(['-e', '--env']);

/**
 * Splits the user's extra k6 flags into those for `k6 archive` (options: they are stored in the
 * archive) and those `k6 run` takes (run-only flags, and `-e`/`--env` again so that they win over
 * the runner's environment as they do in a plain `k6 run`).
 * @throws ConfigurationError for a flag the product sets itself.
 */
export function splitK6Args(args: readonly string[]): { archiveArgs: string[]; runArgs: string[] } {
  const archiveArgs: string[] = [];
  const runArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const flag = arg.startsWith('-') ? arg.split('=')[0]! : '';
    if (flag in RESERVED_FLAGS) {
      throw new ConfigurationError(`k6 args: ${flag} cannot be given: ${RESERVED_FLAGS[flag]}`);
    }
    if (BOTH_FLAGS.has(flag)) {
      // `-e NAME=value` is two words, `--env=NAME=value` one.
      const words = arg === flag ? [arg, args[++i]] : [arg];
      if (words[1] === undefined && words.length === 2)
        throw new ConfigurationError(`k6 args: ${flag} needs a value`);
      archiveArgs.push(...(words as string[]));
      runArgs.push(...(words as string[]));
      continue;
    }
    if (flag in RUN_ONLY_FLAGS) {
      runArgs.push(arg);
      if (RUN_ONLY_FLAGS[flag] && !arg.includes('=')) {
        const value = args[++i];
        if (value === undefined) throw new ConfigurationError(`k6 args: ${flag} needs a value`);
        runArgs.push(value);
      }
      continue;
    }
    archiveArgs.push(arg);
  }
  return { archiveArgs, runArgs };
}

/**
 * Parses a Go duration as k6 prints it (`10m30s`, `1h2m3.5s`, `250ms`) into seconds.
 * @throws Error for anything else.
 */
export function parseGoDuration(text: string): number {
  if (text === '0' || text === '0s') return 0;
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed !== text.length || consumed === 0) throw new Error(`not a duration: "${text}"`);
  return total;
}

async function k6(binary: string, args: string[], what: string): Promise<string> {
  try {
    const { stdout } = await run(binary, args, {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, K6_NO_USAGE_REPORT: 'true' },
    });
    return stdout;
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') throw new ConfigurationError(`k6 binary: ${binary} was not found`);
    throw new ConfigurationError(
      `${what}: ${k6ErrorLine(`${e.stdout ?? ''}\n${e.stderr ?? ''}`) || e.message}`,
    );
  }
}

/**
 * Runs the preflight.
 * @param options.script path of the k6 script (or of a k6 archive).
 * @param options.k6Args extra k6 flags as separate words (`['--vus', '10', '-e', 'A=b']`).
 * @param options.workDir a folder for the archive.
 * @throws ConfigurationError when the script is missing or invalid, a flag is unknown or reserved,
 *   or a threshold is malformed; the message is k6's own reason where k6 gave one.
 */
export async function preflight(options: {
  k6Binary: string;
  script: string;
  k6Args: readonly string[];
  workDir: string;
}): Promise<Preflight> {
  const { k6Binary, script, workDir } = options;
  try {
    await access(script);
  } catch {
    throw new ConfigurationError(`script: ${script} does not exist`);
  }
  const scriptHash = createHash('sha256')
    .update(await readFile(script))
    .digest('hex');
  const { archiveArgs, runArgs } = splitK6Args(options.k6Args);
  const archivePath = path.join(workDir, 'archive.tar');
  const versionOut = await k6(k6Binary, ['version'], 'k6 version');
  const k6Version = /k6 (v\d+\.\d+\.\d+\S*)/.exec(versionOut)?.[1] ?? versionOut.trim();
  await k6(
    k6Binary,
    ['archive', '--quiet', '--no-color', '-O', archivePath, ...archiveArgs, script],
    `k6 archive ${script}`,
  );
  const inspected = await k6(
    k6Binary,
    ['inspect', '--execution-requirements', archivePath],
    `k6 inspect ${script}`,
  );
  const options_ = JSON.parse(inspected) as Record<string, unknown>;
  const thresholds = parseThresholds(options_.thresholds);
  const maxVUs = Number(options_.maxVUs ?? 0);
  const totalDurationS = parseGoDuration(String(options_.totalDuration ?? '0s'));
  const tags = Object.fromEntries(
    Object.entries((options_.tags ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
  );
  return {
    archivePath,
    k6Version,
    scriptHash,
    thresholds,
    maxVUs,
    totalDurationS,
    tags,
    runArgs,
    options: options_,
  };
}
