import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigurationError } from '../errors.ts';
import { k6CommandTimeoutS, k6TimedOut } from './binary.ts';
import { runnerEntryModule } from './entry.ts';
import { K6_EXIT } from './exit-codes.ts';
import { k6ErrorLine } from './log.ts';

const run = promisify(execFile);

/**
 * The k6 archive every runner runs, and what k6 says about it: the script is bundled with
 * `k6 archive` (so every runner runs the same code, and the user's option flags are baked into the
 * archive) and read back with `k6 inspect --execution-requirements`, which prints the consolidated
 * options with `thresholds`, `scenarios`, `maxVUs` and `totalDuration`.
 */

/**
 * Runs one k6 command and returns its stdout. The environment is this process's with `env` over
 * it and usage reports off. A command still running after {@link k6CommandTimeoutS} (60 s) is killed.
 * @param what names the command in errors (`k6 archive script.js`).
 * @throws ConfigurationError when the binary is missing, did not finish in time (naming the binary
 *   and the command), or k6 failed (k6's own reason where it gave one); ConfigurationError with `k6ExitCode` when k6 exited 104 (invalid options) or 107 (a script exception).
 */
async function runK6(
  binary: string,
  args: string[],
  what: string,
  env: Record<string, string> = {},
): Promise<string> {
  try {
    const { stdout } = await run(binary, args, {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, ...env, K6_NO_USAGE_REPORT: 'true' },
      timeout: k6CommandTimeoutS() * 1000,
      killSignal: 'SIGKILL',
    });
    return stdout;
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string; stdout?: string; killed?: boolean };
    if (e.code === 'ENOENT') throw new ConfigurationError(`k6 binary: ${binary} was not found`);
    if (e.killed) throw new ConfigurationError(k6TimedOut(binary, what));
    const message = `${what}: ${k6ErrorLine(`${e.stdout ?? ''}\n${e.stderr ?? ''}`) || e.message}`;
    const code = Number(e.code);
    if (code === K6_EXIT.invalidConfig || code === K6_EXIT.scriptException)
      throw new ConfigurationError(message, { k6ExitCode: code });
    throw new ConfigurationError(message);
  }
}

/**
 * `k6 version`'s version, e.g. `v2.2.0` (the whole output, trimmed, when it names none).
 * @throws what {@link runK6} throws.
 */
export async function k6Version(k6Binary: string): Promise<string> {
  const versionOut = await runK6(k6Binary, ['version'], 'k6 version');
  return /k6 (v\d+\.\d+\.\d+\S*)/.exec(versionOut)?.[1] ?? versionOut.trim();
}

/** Where and how one script is archived ({@link k6Archiver}). */
export interface ArchiveTarget {
  k6Binary: string;
  /** Path of the user's script (or k6 archive), as given. */
  script: string;
  /** Where the archive (a tar file) is written; every call writes it anew. */
  archivePath: string;
  /** The user's option flags for `k6 archive` (`splitK6Args`). */
  archiveArgs: readonly string[];
  /** The `-e NAME=value` values: in every k6 process's environment, never stored in the archive. */
  env: Record<string, string>;
}

/** `k6 archive` and `k6 inspect` of one script ({@link k6Archiver}). */
export interface K6Archiver {
  readonly target: ArchiveTarget;
  /**
   * Writes the archive: `extra` flags first (so the user's own flags win), then the user's option
   * flags, of `entry` (the script by default).
   */
  archive(extra: string[], entry?: string): Promise<string>;
  /** `k6 inspect`'s output (JSON text) of the archive, with `--execution-requirements` unless `plain`. */
  inspect(plain?: boolean): Promise<string>;
}

/**
 * The archive and inspect commands of one script. The environment (with the `-e` values) is read
 * as `k6 run script.js` reads it (`--include-system-env-vars`), and never stored
 * (`--exclude-env-vars`).
 * @throws (from its calls) what {@link runK6} throws.
 */
export function k6Archiver(target: ArchiveTarget): K6Archiver {
  const { k6Binary, script, archivePath, env } = target;
  return {
    target,
    archive: (extra, entry = script) =>
      runK6(
        k6Binary,
        [
          'archive',
          '--quiet',
          '--no-color',
          '--include-system-env-vars',
          '--exclude-env-vars',
          '-O',
          archivePath,
          ...extra,
          ...target.archiveArgs,
          // k6's flags end here (cobra), so a script named `-dash.js` is read as a file, not as `-d ash.js`.
          '--',
          entry,
        ],
        `k6 archive ${script}`,
        env,
      ),
    inspect: (plain = false) =>
      runK6(
        k6Binary,
        ['inspect', '--include-system-env-vars', ...(plain ? [] : ['--execution-requirements']), archivePath],
        `k6 inspect ${script}`,
        env,
      ),
  };
}

/**
 * Archives the script and reads its consolidated options back with
 * `k6 inspect --execution-requirements`. `k6 run` gives a test with iterations but no vus its
 * default of 1 VU; `k6 inspect --execution-requirements` does not and refuses it: then the default
 * is baked into the archive (a user's own --vus comes later on the command line and wins).
 * @returns the options as `k6 inspect` printed them, and the flags baked in for k6's defaults
 *   (`[]` or `['--vus', '1']`), which every later archive of the script needs too.
 * @throws what {@link k6Archiver}'s calls throw; ConfigurationError naming the binary when
 *   `k6 inspect` printed no JSON options.
 */
export async function archiveAndInspect(
  k6: K6Archiver,
): Promise<{ options: Record<string, unknown>; defaults: string[] }> {
  let defaults: string[] = [];
  await k6.archive(defaults);
  let inspected: string;
  try {
    inspected = await k6.inspect();
  } catch (error) {
    if (!(error instanceof ConfigurationError) || !/number of VUs must be more than 0/.test(error.message))
      throw error;
    const plain = parseInspect(await k6.inspect(true), k6.target.k6Binary) as { vus?: unknown };
    if (plain.vus !== null && plain.vus !== undefined) throw error;
    defaults = ['--vus', '1'];
    await k6.archive(defaults);
    inspected = await k6.inspect();
  }
  return { options: parseInspect(inspected, k6.target.k6Binary), defaults };
}

/** Whether a file is a k6 archive (a tar file: `ustar` at byte 257), as `k6 run` tells them apart. */
export async function isK6Archive(file: string): Promise<boolean> {
  const head = await readFile(file);
  return head.subarray(257, 262).toString('latin1') === 'ustar';
}

/**
 * Archives a user's k6 archive again with the runners' thresholds in a config file given first
 * (`runner-config.json` in `workDir`), so a user's --config wins. An archive has no script file to
 * import, so it runs as it is, without the entry module.
 * @param thresholds `options.thresholds` for the runners (`runnerThresholds` in src/k6/entry.ts).
 * @param defaults the flags {@link archiveAndInspect} baked in.
 */
export async function archiveWithConfig(
  k6: K6Archiver,
  workDir: string,
  thresholds: Record<string, unknown[]>,
  defaults: string[],
): Promise<void> {
  const config = path.join(workDir, 'runner-config.json');
  await writeFile(config, JSON.stringify({ thresholds }));
  await k6.archive(['--config', config, ...defaults]);
}

/**
 * Writes the runner entry module (src/k6/entry.ts) next to the archive and archives it in place of
 * the script, so every runner runs it. When the script has no `default` export after all (a
 * scenario's exec that inspect reported as default), it is archived again without that line.
 * @param options.thresholds `options.thresholds` for the runners (`runnerThresholds` in src/k6/entry.ts).
 * @param options.runsDefault whether some scenario runs `default` (`runsDefault` in src/k6/entry.ts).
 * @param options.defaults the flags {@link archiveAndInspect} baked in.
 * @throws what {@link K6Archiver.archive} throws.
 */
export async function archiveEntry(
  k6: K6Archiver,
  workDir: string,
  options: {
    script: string;
    thresholds: Record<string, unknown[]>;
    runsDefault: boolean;
    defaults: string[];
  },
): Promise<void> {
  const entry = path.join(workDir, 'k6-distributed-entry.js');
  const write = (withDefault: boolean) =>
    writeFile(
      entry,
      runnerEntryModule({ script: options.script, thresholds: options.thresholds, runsDefault: withDefault }),
    );
  await write(options.runsDefault);
  try {
    await k6.archive(options.defaults, entry);
  } catch (error) {
    if (!options.runsDefault || !/default/.test(String((error as Error).message))) throw error;
    await write(false);
    await k6.archive(options.defaults, entry);
  }
}

/**
 * `k6 inspect`'s JSON output as an object.
 * @throws ConfigurationError naming the binary when it printed something else (not k6, or a wrapper
 *   that writes to stdout).
 */
function parseInspect(stdout: string, k6Binary: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(stdout);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // below
  }
  const first = stdout.trim().split('\n')[0]?.slice(0, 80) ?? '';
  throw new ConfigurationError(
    `k6 binary: ${k6Binary} inspect printed no JSON options (is it k6?): ${first ? `"${first}"` : 'nothing'}`,
  );
}
