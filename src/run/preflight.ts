import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from '../errors.ts';
import {
  archiveAndInspect,
  archiveEntry,
  archiveWithConfig,
  isK6Archive,
  k6Archiver,
  k6Version,
} from '../k6/archive.ts';
import { runnerThresholds, runsDefault } from '../k6/entry.ts';
import { shortArrivalRates, sparseIterationScenarios } from '../k6/executors.ts';
import { envTrue, noColorGiven, splitK6Args } from '../k6/flags.ts';
import { parseGoDuration } from '../k6/go-syntax.ts';
import {
  declaredContains,
  type ExportedLifecycle,
  exportedLifecycle,
  mentionsHandleSummary,
  namedLifecycle,
  type ScriptReads,
  scriptReads,
} from '../k6/script-sources.ts';
import { parseThresholds, type Threshold } from '../k6/thresholds-parser.ts';
import { RUN_TAG, RUNNER_TAG, ZONE_TAG } from '../plan.ts';
import type { MetricContains } from '../result/schema.ts';

/**
 * The preflight stage: everything that can be checked before a runner starts. The script is
 * bundled into the k6 archive every runner runs and read back with `k6 inspect` (src/k6/archive.ts),
 * the user's k6 flags are sorted (src/k6/flags.ts), and the thresholds parsed
 * (src/k6/thresholds-parser.ts); the run then plans its runners from what this learnt.
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
  reads: ScriptReads;
  /**
   * The script (not an archive) mentions `handleSummary`: after the run, it is called once on the
   * global data (src/k6/handle-summary.ts); the runners never run it (src/k6/entry.ts).
   */
  handleSummary?: boolean;
  /**
   * Which of setup() and teardown() the script's sources export (src/k6/script-sources.ts): the
   * run says it ran one only when the script has it. Unknown (absent): it says so as for one.
   */
  lifecycle?: ExportedLifecycle;
  /**
   * Which of setup() and teardown() the script's sources name at all (src/k6/script-sources.ts
   * `namedLifecycle`): one never named is not asked for (no request to a runner). Unknown (absent):
   * it is asked for.
   */
  lifecycleNamed?: ExportedLifecycle;
  /** `--no-color` or `NO_COLOR` given: handleSummary's `options.noColor`. */
  noColor?: boolean;
  /** The script was given as a k6 archive (`.tar`): it runs as it is, without the entry module. */
  isArchive?: boolean;
}

/**
 * Runs the preflight.
 * @param options.script path of the k6 script (or of a k6 archive).
 * @param options.k6Args extra k6 flags as separate words (`['--vus', '10', '-e', 'A=b']`).
 * @param options.workDir a folder for the archive.
 * @throws ConfigurationError when the script is missing or invalid, a flag is unknown or reserved,
 *   or a threshold is malformed; the message is k6's own reason where k6 gave one (with `k6ExitCode`
 *   when k6 refused the options or the script with its own exit code).
 */
export async function preflight(options: {
  k6Binary: string;
  script: string;
  k6Args: readonly string[];
  workDir: string;
}): Promise<Preflight> {
  const { k6Binary, script, workDir } = options;
  let kind: string | undefined;
  try {
    await access(script);
    kind = fileKind(await stat(script));
  } catch {
    throw new ConfigurationError(`script: ${script} does not exist`);
  }
  if (kind) throw new ConfigurationError(`script: ${script} is ${kind}, not a k6 script or archive`);
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
  const version = await k6Version(k6Binary);
  const k6 = k6Archiver({ k6Binary, script, archivePath, archiveArgs, env });
  const { options: options_, defaults } = await archiveAndInspect(k6);
  const thresholds = noThresholds ? [] : parseThresholds(options_.thresholds);
  const scriptSources = (await readFile(archivePath)).toString('latin1');
  const inspectedThresholds = (options_.thresholds ?? {}) as Record<string, unknown[]>;
  const forRunners = runnerThresholds(inspectedThresholds);
  const isArchive = await isK6Archive(script);
  const warnings: string[] = [];
  if (isArchive) {
    // A k6 archive has no script file to import: it runs as it is.
    warnings.push(
      `script ${script} is a k6 archive: it runs as it is on every runner, so its handleSummary() runs on each runner's slice and an abortOnFail threshold aborts on one runner's slice; give the script itself for k6's behaviour`,
    );
    if (Object.keys(inspectedThresholds).length === 0)
      await archiveWithConfig(k6, workDir, forRunners, defaults);
  } else {
    await archiveEntry(k6, workDir, {
      script,
      thresholds: forRunners,
      runsDefault: runsDefault(options_.scenarios),
      defaults,
    });
  }
  const maxVUs = Number(options_.maxVUs ?? 0);
  const totalDurationS = parseGoDuration(String(options_.totalDuration ?? '0s'));
  const tags = Object.fromEntries(
    Object.entries((options_.tags ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
  );
  for (const ours of [RUNNER_TAG, RUN_TAG, ZONE_TAG]) {
    if (ours in tags)
      throw new ConfigurationError(
        `tags: the tag ${ours} is set by k6-distributed on every runner's samples; use another tag name`,
      );
  }
  return {
    archivePath,
    k6Version: version,
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
    handleSummary: !isArchive && mentionsHandleSummary(scriptSources),
    lifecycle: exportedLifecycle(scriptSources),
    lifecycleNamed: namedLifecycle(scriptSources),
    isArchive,
    noColor: noColorGiven(options.k6Args),
  };
}

/**
 * What a path is when it is not a regular file (`a directory`, `a character device` for
 * `/dev/null`, …), for the one-line refusal; undefined for a regular file.
 */
function fileKind(info: Stats): string | undefined {
  if (info.isFile()) return undefined;
  if (info.isDirectory()) return 'a directory';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * One line for each way a split over `runners` runners cannot give the answer of one `k6 run`
 * (docs/how-it-works.md explains each):
 * - `__VU` (and `exec.vu.idInInstance`) repeats across runners: each numbers its VUs from 1
 *   (`exec.vu.idInTest` is unique);
 * - `__ITER` and `exec.vu.iterationInScenario` count a VU's own iterations; with fewer VUs per
 *   runner a VU's share differs, and per-VU sequences have gaps in `exec.scenario.iterationInTest`;
 * - `exec.scenario.iterationInTest` has gaps (and goes past the iteration count) in a
 *   per-vu-iterations, constant-vus or ramping-vus scenario ({@link sparseIterationScenarios});
 * - `exec.instance.*` counts one runner's share (each runner is its own k6 instance);
 * - an arrival-rate scenario with fewer `preAllocatedVUs` than runners starts some runners with
 *   no VU: they allocate VUs during the test (from `maxVUs`) or drop iterations
 *   ({@link shortArrivalRates}).
 * @returns no line for fewer than 2 runners.
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
  if (pre.reads.iterationInTest) {
    for (const { name, executor } of sparseIterationScenarios(pre.options.scenarios)) {
      warnings.push(
        `scenario ${name}: the script reads exec.scenario.iterationInTest, which has gaps over ${runners} runners with ${executor} (values past the iteration count); shared-iterations and the arrival-rate executors keep it dense`,
      );
    }
  }
  if (pre.reads.instance) {
    warnings.push(
      `the script reads exec.instance.*: each of the ${runners} runners is its own k6 instance, so its counts and VUs are one runner's share, not the test's`,
    );
  }
  for (const { name, preAllocatedVUs } of shortArrivalRates(pre.options.scenarios, runners)) {
    warnings.push(
      `scenario ${name}: preAllocatedVUs ${preAllocatedVUs} is below the ${runners} runners; runners without one allocate VUs during the test or drop iterations`,
    );
  }
  return warnings;
}
