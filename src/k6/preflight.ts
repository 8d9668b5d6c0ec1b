import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigurationError } from '../errors.ts';
import type { MetricContains } from '../result/result.ts';
import { RUNNER_TAG } from '../run/plan.ts';
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
  /** Flags only `k6 run` takes (`--out`, `--linger` is refused, `--features`), passed to every runner. */
  runArgs: string[];
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

/** Flags given to both: `k6 run` of an archive lets the runner's own environment win over the
 * archive's `-e` values, unlike `k6 run script.js`, so they are passed again to keep `-e` first. */
const BOTH_FLAGS = new Set(['-e', '--env']);

/**
 * Splits the user's extra k6 flags into those for `k6 archive` (options: they are stored in the
 * archive) and those `k6 run` takes (run-only flags, and `-e`/`--env` again so that they win over
 * the runner's environment as they do in a plain `k6 run`).
 * @throws ConfigurationError for a flag the product sets itself.
 */
export function splitK6Args(args: readonly string[]): {
  archiveArgs: string[];
  runArgs: string[];
  /** Flags the product handles itself, by name: `--summary-mode` -> `full`. */
  productArgs: Record<string, string>;
} {
  const archiveArgs: string[] = [];
  const runArgs: string[] = [];
  const productArgs: Record<string, string> = {};
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
  return { archiveArgs, runArgs, productArgs };
}

/** A boolean environment variable as k6 reads one (Go `strconv.ParseBool`). */
function envTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
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
  try {
    await access(script);
  } catch {
    throw new ConfigurationError(`script: ${script} does not exist`);
  }
  const scriptHash = createHash('sha256')
    .update(await readFile(script))
    .digest('hex');
  const { archiveArgs, runArgs, productArgs } = splitK6Args(options.k6Args);
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
  const archive = (extra: string[]) =>
    k6(
      k6Binary,
      ['archive', '--quiet', '--no-color', '-O', archivePath, ...extra, ...archiveArgs, script],
      `k6 archive ${script}`,
    );
  const inspect = () =>
    k6(k6Binary, ['inspect', '--execution-requirements', archivePath], `k6 inspect ${script}`);
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
    const plain = JSON.parse(await k6(k6Binary, ['inspect', archivePath], `k6 inspect ${script}`)) as {
      vus?: unknown;
    };
    if (plain.vus !== null && plain.vus !== undefined) throw error;
    defaults = ['--vus', '1'];
    await archive(defaults);
    inspected = await inspect();
  }
  const options_ = JSON.parse(inspected) as Record<string, unknown>;
  const thresholds = noThresholds ? [] : parseThresholds(options_.thresholds);
  if (Object.keys((options_.thresholds ?? {}) as object).length === 0) {
    // A runner whose segment gets no VU in any scenario (several scenarios of fewer VUs than
    // runners: k6 gives each scenario's first VU to the first segment) observes no metric, and
    // k6 v2.2.0's end-of-test summary then crashes ("No initial value") and writes no export. A
    // metric with a threshold is always in the summary, so the runners get one that cannot fail
    // (`iterations: count>=0`, through a config file given first, so a user's --config wins). It
    // is not one of the script's thresholds: `thresholds` above was read before.
    const config = path.join(workDir, 'runner-config.json');
    await writeFile(config, JSON.stringify({ thresholds: { iterations: ['count>=0'] } }));
    await archive(['--config', config, ...defaults]);
  }
  const maxVUs = Number(options_.maxVUs ?? 0);
  const totalDurationS = parseGoDuration(String(options_.totalDuration ?? '0s'));
  const tags = Object.fromEntries(
    Object.entries((options_.tags ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
  );
  if (RUNNER_TAG in tags) {
    throw new ConfigurationError(
      `tags: the tag ${RUNNER_TAG} is set by k6-distributed on every runner's samples; use another tag name`,
    );
  }
  const sources = (await readFile(archivePath)).toString('latin1');
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
    noThresholds,
    ...(summaryMode === undefined ? {} : { summaryMode }),
    warnings:
      summaryMode === 'disabled'
        ? [
            '--summary-mode disabled: the runners still write their summaries (the aggregate is made of them); the report is written as usual',
          ]
        : [],
    declaredContains: declaredContains(sources),
    reads: scriptReads(sources),
  };
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
