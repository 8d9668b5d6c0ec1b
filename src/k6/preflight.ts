import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigurationError } from '../errors.ts';
import { RUN_TAG, RUNNER_TAG } from '../plan.ts';
import type { MetricContains } from '../result/schema.ts';
import { runnerEntryModule, runsDefault, withoutAbortOnFail } from './entry.ts';
import { K6_EXIT, K6RefusedError } from './exit-codes.ts';
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
  /** Flags only `k6 run` takes (`--out`, `--features`; `--linger` is refused), passed to every runner. */
  runArgs: string[];
  /**
   * The `-e NAME=value` values, by name: every runner gets them in its environment (never on its
   * command line, in the archive or in a ConfigMap).
   */
  env: Record<string, string>;
  /** The consolidated options as `k6 inspect` printed them. */
  options: Record<string, unknown>;
  /**
   * `--no-thresholds` or `K6_NO_THRESHOLDS` was given: no threshold is judged, neither on the
   * runners nor on the aggregate ({@link thresholds} is empty), as `k6 run` does.
   */
  noThresholds: boolean;
  /** `--summary-mode` (or `K6_SUMMARY_MODE`) as given, if any: `compact`, `full` or `disabled`. */
  summaryMode?: string;
  /** One line each: what the preflight changed or cannot honour, said before the run. */
  warnings: string[];
  /** `contains` of custom metrics as the script declares them ({@link declaredContains}). */
  declaredContains: Record<string, MetricContains>;
  /** Whether the script's sources mention values that splitting changes ({@link splittingWarnings}). */
  reads: { vu: boolean; vuIterations: boolean };
  /**
   * The script (not an archive) mentions `handleSummary`: after the run, it is called once on the
   * global data (src/k6/handle-summary.ts); the runners never run it (src/k6/entry.ts).
   */
  handleSummary?: boolean;
  /** `--no-color` or `NO_COLOR` given: handleSummary's `options.noColor`. */
  noColor?: boolean;
  /** The script was given as a k6 archive (`.tar`): it runs as it is, without the entry module. */
  isArchive?: boolean;
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
  '--linger': 'every runner lingers until teardown() ran once; k6-distributed ends the linger itself',
  '-l': 'every runner lingers until teardown() ran once; k6-distributed ends the linger itself',
  '--archive-out': 'the archive is written by the preflight',
  '-O': 'the archive is written by the preflight',
};

/** Flags that `k6 run` takes and `k6 archive` does not, with whether they take a value. */
const RUN_ONLY_FLAGS: Record<string, boolean> = {
  '--out': true,
  '-o': true,
  '--no-usage-report': false,
  '--features': true,
  // Secret sources are read when the test runs; never given to `k6 archive`, so never in the archive.
  '--secret-source': true,
  '--no-thresholds': false,
};

/**
 * Flags the product takes for itself and gives to no k6 process: every runner must write its
 * summary export, which `--summary-mode disabled` would stop; the product prints its own report.
 */
const PRODUCT_FLAGS: Record<string, boolean> = {
  '--summary-mode': true,
};

/**
 * `-e NAME=value`: given to no k6 command line (where `ps` shows them) and stored in no archive
 * (`k6 archive --exclude-env-vars`); every k6 process gets them in its environment instead, with
 * `--include-system-env-vars`, which is what a plain `k6 run script.js` does with its environment.
 */
const ENV_FLAGS = new Set(['-e', '--env']);

/**
 * Splits the user's extra k6 flags into those for `k6 archive` (options: they are stored in the
 * archive), those only `k6 run` takes, and the `-e`/`--env` values (by name, the last one wins as
 * in k6), which every k6 process gets in its environment.
 * @throws ConfigurationError for a flag the product sets itself, or an `-e` that is not NAME=value.
 */
export function splitK6Args(args: readonly string[]): {
  archiveArgs: string[];
  runArgs: string[];
  /** Flags the product handles itself, by name: `--summary-mode` -> `full`. */
  productArgs: Record<string, string>;
  /** The `-e NAME=value` values, by name. */
  env: Record<string, string>;
} {
  const archiveArgs: string[] = [];
  const runArgs: string[] = [];
  const productArgs: Record<string, string> = {};
  const env: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const flag = arg.startsWith('-') ? arg.split('=')[0]! : '';
    if (flag in RESERVED_FLAGS) {
      throw new ConfigurationError(`k6 args: ${flag} cannot be given: ${RESERVED_FLAGS[flag]}`);
    }
    if (flag in PRODUCT_FLAGS) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i];
      if (value === undefined) throw new ConfigurationError(`k6 args: ${flag} needs a value`);
      productArgs[flag] = value;
      continue;
    }
    if (ENV_FLAGS.has(flag)) {
      // `-e NAME=value` is two words, `--env=NAME=value` one.
      const value = arg === flag ? args[++i] : arg.slice(flag.length + 1);
      if (value === undefined) throw new ConfigurationError(`k6 args: ${flag} needs a value`);
      const eq = value.indexOf('=');
      if (eq <= 0)
        throw new ConfigurationError(`k6 args: ${flag} ${value.split('=')[0]}: must be NAME=value`);
      env[value.slice(0, eq)] = value.slice(eq + 1);
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
  return { archiveArgs, runArgs, productArgs, env };
}

/** A boolean environment variable as k6 reads one (Go `strconv.ParseBool`). */
function envTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

/** Whether k6 would print without colours: `--no-color` among the user's flags, or `NO_COLOR` (any value) or `K6_NO_COLOR` set (k6 `cmd/state`). */
export function noColorGiven(k6Args: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  return k6Args.includes('--no-color') || env.NO_COLOR !== undefined || envTrue(env.K6_NO_COLOR);
}

/** Executors that run for a set time (k6 `lib/executor`): `duration`, or the sum of `stages`. */
const TIMED_EXECUTORS = new Set([
  'constant-vus',
  'ramping-vus',
  'constant-arrival-rate',
  'ramping-arrival-rate',
  'externally-controlled',
]);

/**
 * The earliest a test can end by itself, in s: the latest, over its scenarios that run for a set
 * time, of `startTime` plus `duration` (or the sum of `stages`' durations); 0 when none does
 * (`shared-iterations` and `per-vu-iterations` may end at any time). A test that is aborted or
 * stopped ends earlier. Durations as k6 prints them (k6 `lib/executor`).
 * @param scenarios `options.scenarios` as `k6 inspect` prints them.
 */
export function earliestEndS(scenarios: unknown): number {
  if (scenarios === null || typeof scenarios !== 'object') return 0;
  const duration = (value: unknown) => (typeof value === 'string' ? parseGoDuration(value) : 0);
  let end = 0;
  for (const scenario of Object.values(scenarios as Record<string, Record<string, unknown>>)) {
    if (!scenario || !TIMED_EXECUTORS.has(String(scenario.executor))) continue;
    const stages = Array.isArray(scenario.stages) ? (scenario.stages as Array<{ duration?: unknown }>) : [];
    const length =
      stages.length > 0
        ? stages.reduce((sum, s) => sum + duration(s.duration), 0)
        : duration(scenario.duration);
    end = Math.max(end, duration(scenario.startTime) + length);
  }
  return end;
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

async function k6(
  binary: string,
  args: string[],
  what: string,
  env: Record<string, string> = {},
): Promise<string> {
  try {
    const { stdout } = await run(binary, args, {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, ...env, K6_NO_USAGE_REPORT: 'true' },
    });
    return stdout;
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') throw new ConfigurationError(`k6 binary: ${binary} was not found`);
    const message = `${what}: ${k6ErrorLine(`${e.stdout ?? ''}\n${e.stderr ?? ''}`) || e.message}`;
    const code = Number(e.code);
    if (code === K6_EXIT.invalidConfig || code === K6_EXIT.scriptException)
      throw new K6RefusedError(message, code);
    throw new ConfigurationError(message);
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
  let isFile: boolean;
  try {
    await access(script);
    isFile = (await stat(script)).isFile();
  } catch {
    throw new ConfigurationError(`script: ${script} does not exist`);
  }
  if (!isFile) throw new ConfigurationError(`script: ${script} is a directory, not a k6 script or archive`);
  const scriptHash = createHash('sha256')
    .update(await readFile(script))
    .digest('hex');
  const { archiveArgs, runArgs, productArgs, env } = splitK6Args(options.k6Args);
  const noThresholds = runArgs.includes('--no-thresholds') || envTrue(process.env.K6_NO_THRESHOLDS);
  // Given explicitly, so that runners without this process's environment (Pods) skip them too.
  if (noThresholds && !runArgs.includes('--no-thresholds')) runArgs.push('--no-thresholds');
  const summaryMode = productArgs['--summary-mode'] ?? process.env.K6_SUMMARY_MODE;
  if (summaryMode !== undefined && !['compact', 'full', 'disabled'].includes(summaryMode)) {
    throw new ConfigurationError(
      `k6 args: --summary-mode ${summaryMode} is not a summary mode; use compact, full or disabled`,
    );
  }
  const archivePath = path.join(workDir, 'archive.tar');
  const versionOut = await k6(k6Binary, ['version'], 'k6 version');
  const k6Version = /k6 (v\d+\.\d+\.\d+\S*)/.exec(versionOut)?.[1] ?? versionOut.trim();
  // The environment (with the `-e` values) is read as `k6 run script.js` reads it, and never stored.
  const archive = (extra: string[], entry = script) =>
    k6(
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
        ...archiveArgs,
        entry,
      ],
      `k6 archive ${script}`,
      env,
    );
  const inspect = () =>
    k6(
      k6Binary,
      ['inspect', '--include-system-env-vars', '--execution-requirements', archivePath],
      `k6 inspect ${script}`,
      env,
    );
  let defaults: string[] = [];
  await archive(defaults);
  let inspected: string;
  try {
    inspected = await inspect();
  } catch (error) {
    // `k6 run` gives a test with iterations but no vus its default of 1 VU; `k6 inspect
    // --execution-requirements` does not and refuses it. Bake the default into the archive (a
    // user's own --vus comes later on the command line and wins).
    if (!(error instanceof ConfigurationError) || !/number of VUs must be more than 0/.test(error.message))
      throw error;
    const plain = parseInspect(
      await k6(k6Binary, ['inspect', '--include-system-env-vars', archivePath], `k6 inspect ${script}`, env),
      k6Binary,
    ) as { vus?: unknown };
    if (plain.vus !== null && plain.vus !== undefined) throw error;
    defaults = ['--vus', '1'];
    await archive(defaults);
    inspected = await inspect();
  }
  const options_ = parseInspect(inspected, k6Binary);
  const thresholds = noThresholds ? [] : parseThresholds(options_.thresholds);
  const scriptSources = (await readFile(archivePath)).toString('latin1');
  const inspectedThresholds = (options_.thresholds ?? {}) as Record<string, unknown[]>;
  // A runner whose segment gets no VU in any scenario (several scenarios of fewer VUs than
  // runners: k6 gives each scenario's first VU to the first segment) observes no metric, and
  // k6 v2.2.0's end-of-test summary then crashes ("No initial value") and writes no export. A
  // metric with a threshold is always in the summary, so the runners get one that cannot fail
  // (`iterations: count>=0`). It is not one of the script's thresholds: `thresholds` above was read before.
  const runnerThresholds =
    Object.keys(inspectedThresholds).length === 0
      ? { iterations: ['count>=0'] }
      : withoutAbortOnFail(inspectedThresholds);
  const isArchive = await isK6Archive(script);
  const warnings: string[] = [];
  if (isArchive) {
    // A k6 archive has no script file to import: it runs as it is (the guard threshold through a
    // config file given first, so a user's --config wins).
    warnings.push(
      `script ${script} is a k6 archive: it runs as it is on every runner, so its handleSummary() runs on each runner's slice and an abortOnFail threshold aborts on one runner's slice; give the script itself for k6's behaviour`,
    );
    if (Object.keys(inspectedThresholds).length === 0) {
      const config = path.join(workDir, 'runner-config.json');
      await writeFile(config, JSON.stringify({ thresholds: runnerThresholds }));
      await archive(['--config', config, ...defaults]);
    }
  } else {
    await archiveEntry(archive, workDir, {
      script,
      thresholds: runnerThresholds,
      runsDefault: runsDefault(options_.scenarios),
      defaults,
    });
  }
  const maxVUs = Number(options_.maxVUs ?? 0);
  const totalDurationS = parseGoDuration(String(options_.totalDuration ?? '0s'));
  const tags = Object.fromEntries(
    Object.entries((options_.tags ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
  );
  for (const ours of [RUNNER_TAG, RUN_TAG]) {
    if (ours in tags)
      throw new ConfigurationError(
        `tags: the tag ${ours} is set by k6-distributed on every runner's samples; use another tag name`,
      );
  }
  return {
    archivePath,
    k6Version,
    scriptHash,
    thresholds,
    maxVUs,
    totalDurationS,
    tags,
    runArgs,
    env,
    options: options_,
    noThresholds,
    ...(summaryMode === undefined ? {} : { summaryMode }),
    warnings: [
      ...warnings,
      ...(summaryMode === 'disabled'
        ? [
            '--summary-mode disabled: the runners still write their summaries (the aggregate is made of them); the report is written as usual',
          ]
        : []),
    ],
    declaredContains: declaredContains(scriptSources),
    reads: scriptReads(scriptSources),
    handleSummary: !isArchive && /\bhandleSummary\b/.test(scriptSources),
    isArchive,
    noColor: noColorGiven(options.k6Args),
  };
}

/** Whether a file is a k6 archive (a tar file: `ustar` at byte 257), as `k6 run` tells them apart. */
async function isK6Archive(file: string): Promise<boolean> {
  const head = await readFile(file);
  return head.subarray(257, 262).toString('latin1') === 'ustar';
}

/**
 * Writes the runner entry module (src/k6/entry.ts) next to the archive and archives it in place of
 * the script, so every runner runs it. When the script has no `default` export after all (a
 * scenario's exec that inspect reported as default), it is archived again without that line.
 */
async function archiveEntry(
  archive: (extra: string[], entry?: string) => Promise<string>,
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
    await archive(options.defaults, entry);
  } catch (error) {
    if (!options.runsDefault || !/default/.test(String((error as Error).message))) throw error;
    await write(false);
    await archive(options.defaults, entry);
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

/**
 * What custom metrics measure, as the script declares them: `new Trend('name', true)` and
 * `new Gauge('name', true)` hold time (ms), the rest default. Read from the archive's sources (the
 * script and its imports), since a runner's summary export does not say it and k6's REST API lists
 * a metric only once it has a sample. A metric whose name is not a literal is not found here.
 */
export function declaredContains(sources: string): Record<string, MetricContains> {
  const out: Record<string, MetricContains> = {};
  const re = /new\s+(?:Trend|Gauge)\s*\(\s*(['"`])([A-Za-z_][A-Za-z0-9_]*)\1\s*,\s*true\s*\)/g;
  for (const m of sources.matchAll(re)) out[m[2]!] = 'time';
  return out;
}

/** Whether the script reads values that splitting changes (see {@link splittingWarnings}). */
function scriptReads(sources: string): Preflight['reads'] {
  return {
    vu: /\b__VU\b|\bvu\.idInInstance\b/.test(sources),
    vuIterations: /\biterationInScenario\b|\b__ITER\b/.test(sources),
  };
}

/** Executors that start iterations at a rate, with `preAllocatedVUs`. */
const ARRIVAL_RATE = new Set(['constant-arrival-rate', 'ramping-arrival-rate']);

/**
 * One line for each way a split over `runners` runners cannot give the answer of one `k6 run`
 * (docs/how-it-works.md explains each):
 * - `__VU` (and `exec.vu.idInInstance`) repeats across runners: each numbers its VUs from 1
 *   (`exec.vu.idInTest` is unique);
 * - `__ITER` and `exec.vu.iterationInScenario` count a VU's own iterations; with fewer VUs per
 *   runner a VU's share differs, and per-VU sequences have gaps in `exec.scenario.iterationInTest`;
 * - an arrival-rate scenario with fewer `preAllocatedVUs` than runners starts some runners with
 *   no VU: they allocate VUs during the test (from `maxVUs`) or drop iterations.
 */
export function splittingWarnings(pre: Preflight, runners: number): string[] {
  if (runners < 2) return [];
  const warnings: string[] = [];
  if (pre.reads.vu) {
    warnings.push(
      `the script reads __VU: VU numbers repeat across the ${runners} runners (each numbers its own VUs from 1); exec.vu.idInTest is unique`,
    );
  }
  if (pre.reads.vuIterations) {
    warnings.push(
      `the script reads __ITER or exec.vu.iterationInScenario: they count one VU's iterations, which differ when ${runners} runners share the VUs`,
    );
  }
  const scenarios = (pre.options.scenarios ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, scenario] of Object.entries(scenarios)) {
    const pre_ = Number(scenario.preAllocatedVUs ?? 0);
    if (ARRIVAL_RATE.has(String(scenario.executor)) && pre_ < runners) {
      warnings.push(
        `scenario ${name}: preAllocatedVUs ${pre_} is below the ${runners} runners; runners without one allocate VUs during the test or drop iterations`,
      );
    }
  }
  return warnings;
}
