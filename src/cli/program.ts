import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { parseArgsStringToArgv } from 'string-argv';
import { killAllLocalRunners, LocalBackend } from '../backends/local/backend.ts';
import { parseRunConfig, RUN_CONFIG_FLAGS } from '../config.ts';
import { startDemoTarget } from '../demo/target.ts';
import { ConfigurationError, EXIT_CODE, errorMessage, exitCodeFor, RunError } from '../errors.ts';
import { DEFAULTS } from '../inputs/defaults.ts';
import { type KubernetesInputs, kubernetesEnvironment } from '../inputs/kubernetes.ts';
import { unclosedQuote } from '../inputs/values.ts';
import type { ZoneInputs } from '../inputs/zones.ts';
import { resolveK6Binary } from '../k6/binary.ts';
import { k6ExitCodeOfRunners } from '../k6/exit-codes.ts';
import { consoleLogger } from '../log.ts';
import { outputKind, writeOutputFile } from '../output-file.ts';
import { htmlReportPath } from '../render/html/file.ts';
import { renderHtmlReport } from '../render/html/report.ts';
import { renderJUnit } from '../render/junit.ts';
import { renderReport } from '../render/markdown.ts';
import { renderTerminalReport } from '../render/terminal/report.ts';
import { wantsColor } from '../render/terminal/style.ts';
import type { RunResult } from '../result/schema.ts';
import { runTest } from '../run/index.ts';
import { addAbCommand } from './ab.ts';
import { addCleanupCommand } from './cleanup.ts';
import {
  addKubernetesOptions,
  kubernetesCliRun,
  readKubernetesFlags,
  readZonesFlag,
  withFlagNames,
} from './kubernetes.ts';

/**
 * The command line over the core, with either backend:
 *   k6-distributed run script.js --runners 4 [-- extra k6 flags]
 *   k6-distributed run script.js --runners 16 --backend kubernetes --node-selector pool=loadtest
 *   k6-distributed ab script.js --rounds 6 --a-env BASE_URL=http://a --b-env BASE_URL=http://b   (src/cli/ab.ts)
 *   k6-distributed cleanup --run-id ID [--namespace NS]   (what a killed CLI left on the cluster)
 *   k6-distributed demo
 * Exit codes: 0 passed; 99 thresholds crossed on the aggregate (as k6); k6's own 107, 108, 110
 * when a runner exited so (a script exception, `test.abort()`, `exec.test.fail()`), 107/100 when
 * the one setup() threw or timed out, 107/101 when the one teardown() did; 104/107 when k6 refused the script or its options before the start
 * (as a plain k6 run exits); 1 a runner failed otherwise or the run could not start; 2 bad input;
 * 130 interrupted.
 */

/** Where the CLI's progress, warnings and errors go: stderr (stdout carries the report). */
export const stderrLog = consoleLogger();

/**
 * The CLI's exit code for a finished run: k6's own code (107, 108, 110, 100, 101) when the one
 * teardown() failed (`k6ExitCode`) or a runner exited so ({@link k6ExitCodeOfRunners}), else from its failure kinds ({@link exitCodeFor}); an
 * interruption that came after the last runner ended still exits 130.
 */
export function exitCodeOf(result: RunResult, interrupted: boolean): number {
  if (interrupted) return exitCodeFor(['interrupted']);
  const kinds = result.failureKinds ?? [];
  const code = exitCodeFor(kinds);
  if (code !== EXIT_CODE.failed) return code;
  // k6's own code when the teardown or a runner's exit says what plain `k6 run` would have exited with.
  return result.k6ExitCode ?? k6ExitCodeOfRunners(result.runners.map((r) => r.exitCode)) ?? code;
}

/**
 * The one line that explains exit 130 when the interruption came after the last runner ended (while
 * the result was aggregated or the reports written): the test ran whole, so its result stands and
 * says so, and the CLI still exits 130, as an interrupted process does (a shell loop or a CI script
 * stops on it, as after any Ctrl-C). Undefined when there was no such interruption (one during the
 * test is in the result itself: kind `interrupted`).
 */
export function interruptedAfterTheTest(
  result: RunResult,
  interrupted: boolean,
  resultPath: string,
): string | undefined {
  if (!interrupted || result.failureKinds?.includes('interrupted')) return undefined;
  return `interrupted while the reports were written, after the test had ended: the result in ${resultPath} is complete and says ${result.verdict}; exit 130 because the run was interrupted`;
}

interface RunFlags {
  runners?: string;
  out?: string;
  report?: string;
  /** A path, `false` for `--no-html`, or absent: next to the result JSON. */
  html?: string | false;
  junit?: string;
  k6?: string;
  k6Args?: string;
  startTimeout?: string;
  grace?: string;
  progressInterval?: string;
}

/** The flags of {@link RunFlags} as the user writes them, for errors. */
const FLAG_NAMES: Record<keyof RunFlags, string> = {
  runners: '--runners',
  out: '--out',
  report: '--report',
  k6: '--k6',
  k6Args: '--k6-args',
  startTimeout: '--start-timeout',
  grace: '--grace',
  progressInterval: '--progress-interval',
  html: '--html',
  junit: '--junit',
};

/**
 * The HTML report's path: `--html`, or next to the result JSON (`.html`) unless `--no-html`; none
 * when the result goes to a device or FIFO (`-o /dev/null`), where a file beside it would be made
 * in `/dev`.
 */
async function htmlPathOf(flags: RunFlags): Promise<string | undefined> {
  if (flags.html === false) return undefined;
  if (flags.html !== undefined) return flags.html;
  const resultPath = flags.out ?? DEFAULTS.resultPath;
  return (await outputKind(resultPath)) === 'file' ? htmlReportPath(resultPath) : undefined;
}

/**
 * Writes one output after the run, when it was asked for.
 * @throws RunError `incomplete` naming the flag and the file, e.g. `--html: could not write r.html:
 *   ENOSPC: …; the result is in r.json`.
 */
async function writeAfterRun(
  file: string | undefined,
  flag: string,
  resultPath: string,
  render: () => string,
): Promise<void> {
  if (!file) return;
  await writeOutputFile(file, render()).catch((error: unknown) => {
    throw new RunError('incomplete', `${flag}: ${errorMessage(error)}; the result is in ${resultPath}`);
  });
}

/**
 * Runs a test. `kubernetes` is the validated Kubernetes flags with `--backend kubernetes`, else
 * undefined (the local backend). Every input is checked, and the cluster credentials loaded, before
 * the preflight; Ctrl-C stops the runners and removes what the run created, a second one kills
 * local runners or deletes the run's objects at once, and exits.
 */
async function runCommand(
  script: string,
  extra: string[],
  flags: RunFlags,
  kubernetes?: KubernetesInputs,
  zones?: { zones: ZoneInputs[]; file: string },
): Promise<number> {
  // An empty value given on purpose (`-n ""`) is a mistake, not "use the default".
  for (const [key, value] of Object.entries(flags)) {
    if (typeof value === 'string' && value.trim() === '' && key !== 'k6Args')
      throw new ConfigurationError(`${FLAG_NAMES[key as keyof RunFlags]}: is empty`);
  }
  const quote = unclosedQuote(flags.k6Args ?? '');
  if (quote) throw new ConfigurationError(`${FLAG_NAMES.k6Args}: ${quote}`);
  const config = parseRunConfig(
    {
      script,
      runners: flags.runners,
      k6Args: [...parseArgsStringToArgv(flags.k6Args ?? ''), ...extra],
      resultPath: flags.out,
      reportPath: flags.report,
      htmlPath: await htmlPathOf(flags),
      junitPath: flags.junit,
      k6Binary: flags.k6,
      startTimeoutS: flags.startTimeout,
      graceS: flags.grace,
      progressIntervalS: flags.progressInterval,
    },
    RUN_CONFIG_FLAGS,
  );
  if (config.k6Binary) resolveK6Binary(config.k6Binary, process.env, RUN_CONFIG_FLAGS.k6Binary);
  const cluster = kubernetes ? await kubernetesCliRun(kubernetes, stderrLog, zones) : undefined;
  if (cluster) stderrLog.info(`run ${cluster.runId} in ${cluster.where}`);
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      stderrLog.warning(
        `${signal} received: stopping every runner${cluster ? ' and removing the run from the cluster' : ''} (again to ${cluster ? 'delete it' : 'kill them'} at once)`,
      );
      controller.abort();
    } else if (cluster && interrupts === 2) {
      stderrLog.warning(
        `${signal} received again: deleting the run's ConfigMap and Pods and exiting (again to exit at once)`,
      );
      void cluster.deleteNow().finally(() => process.exit(130));
    } else {
      stderrLog.warning(`${signal} received again: killing every runner and exiting`);
      killAllLocalRunners();
      process.exit(130);
    }
  };
  // A closed terminal's SIGHUP too: the runners are stopped and the partial result written.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, onSignal);
  try {
    const result = await runTest(config, {
      createBackend: cluster
        ? () => cluster.createBackend()
        : (k6, workDir) =>
            new LocalBackend(k6, workDir, {
              // The script's console output, as k6 prints it, with the runner's index in front.
              onConsole: (runner, line) => process.stderr.write(`[runner ${runner}] ${line}\n`),
            }),
      log: stderrLog,
      signal: controller.signal,
      inputNames: RUN_CONFIG_FLAGS,
      // On Kubernetes the run's objects carry the same id as its samples and its result.
      ...(cluster ? { runId: cluster.runId } : {}),
      ...(zones ? { zones: zones.zones.map(({ name, share, runners }) => ({ name, share, runners })) } : {}),
      ...(kubernetes ? { environment: kubernetesEnvironment(kubernetes) } : {}),
    });
    // A terminal gets k6's own layout in colour; a pipe or a file the same text without escapes.
    process.stdout.write(
      `\n${renderTerminalReport(result, { color: wantsColor(process.stdout.isTTY, process.env) })}`,
    );
    stderrLog.info(`result written to ${config.resultPath}`);
    // Every output was checked before the load; a write that fails all the same keeps the result
    // and says which file failed. A file is read where Mermaid renders (GitHub, editors): the
    // markdown report gets the charts.
    await writeAfterRun(config.htmlPath, '--html', config.resultPath, () => renderHtmlReport({ result }));
    if (config.htmlPath) stderrLog.info(`HTML report written to ${config.htmlPath}`);
    await writeAfterRun(config.reportPath, '--report', config.resultPath, () =>
      renderReport(result, { charts: true }),
    );
    await writeAfterRun(config.junitPath, '--junit', config.resultPath, () =>
      renderJUnit([{ script: config.script, result }]),
    );
    if (config.junitPath) stderrLog.info(`JUnit report written to ${config.junitPath}`);
    const lateInterrupt = interruptedAfterTheTest(result, controller.signal.aborted, config.resultPath);
    if (lateInterrupt) stderrLog.error(lateInterrupt);
    return exitCodeOf(result, controller.signal.aborted);
  } catch (error) {
    throw withFlagNames(error);
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}

/**
 * A file of the package's examples/ folder, found by walking up from this module: it runs from
 * dist/cli.js, from a dist/chunks/ file and from src/cli/program.ts, each a different depth.
 */
function examplePath(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'examples', name);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return path.join(path.dirname(fileURLToPath(import.meta.url)), 'examples', name);
    dir = parent;
  }
}

async function demoCommand(flags: { runners: string; duration: string; rate: string }): Promise<number> {
  const script = examplePath('quickstart.js');
  if (!existsSync(script)) throw new ConfigurationError(`demo: ${script} is missing`);
  const target = await startDemoTarget(stderrLog);
  stderrLog.info(`demo target: ${target.kind} on ${target.url}`);
  try {
    return await runCommand(
      script,
      ['-e', `BASE_URL=${target.url}`, '-e', `DURATION=${flags.duration}`, '-e', `RATE=${flags.rate}`],
      { runners: flags.runners, progressInterval: '5' },
    );
  } finally {
    await target.stop();
  }
}

/** Builds the command tree (exported for tests of the argument handling). */
export function buildProgram(): Command {
  const program = new Command('k6-distributed')
    .description('Run one k6 test as N synchronised runners and judge its thresholds on the global result.')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  const run = program
    .command('run')
    .description(
      'run a k6 script as N runners, on this machine or on a Kubernetes cluster; extra k6 flags go after --',
    )
    .argument('<script>', 'k6 script (or k6 archive)')
    .argument('[k6-flags...]', 'extra k6 flags, after --, e.g. -- --vus 50 -e BASE_URL=http://127.0.0.1:8080')
    .option(
      '-n, --runners <n>',
      'number of runners (each runs execution segment i/N:(i+1)/N)',
      String(DEFAULTS.runners),
    )
    .option('-o, --out <file>', 'result JSON', DEFAULTS.resultPath)
    .option('--report <file>', 'also write the markdown report to this file')
    .option('--html <file>', 'HTML report (default: next to the result JSON, .html)')
    .option('--no-html', 'write no HTML report')
    .option('--junit <file>', 'also write a JUnit XML report: one test case per threshold, check and runner')
    .option(
      '--k6 <path>',
      'k6 binary of the preflight and local runners, e.g. an xk6 build matching --runner-image (default: $K6_BINARY, k6 on PATH, or the pinned build)',
    )
    .option('--k6-args <flags>', 'extra k6 flags as one shell-quoted string')
    .option(
      '--start-timeout <s>',
      'seconds runners may take to initialise their VUs',
      String(DEFAULTS.startTimeoutS),
    )
    .option('--grace <s>', "seconds allowed beyond the test's totalDuration", String(DEFAULTS.graceS))
    .addOption(
      new Option('--progress-interval <s>', 'seconds between progress lines').default(
        String(DEFAULTS.progressIntervalS),
      ),
    );
  addKubernetesOptions(run).action(
    async (script: string, extra: string[], flags: RunFlags, command: Command) => {
      const kubernetes = readKubernetesFlags(command);
      process.exitCode = await runCommand(
        script,
        extra,
        flags,
        kubernetes,
        readZonesFlag(command, kubernetes),
      );
    },
  );
  addAbCommand(program, stderrLog);
  addCleanupCommand(program, (line) => process.stdout.write(`${line}\n`), stderrLog);
  program
    .command('demo')
    .description(
      'start a local HTTP target (nginx, else a bundled server) and run examples/quickstart.js on it',
    )
    .option('-n, --runners <n>', 'number of runners', '4')
    .option('--duration <d>', 'test duration (k6 duration)', '15s')
    .option('--rate <n>', 'requests per second for the whole test', '400')
    .action(async (flags: { runners: string; duration: string; rate: string }) => {
      process.exitCode = await demoCommand(flags);
    });
  return program;
}
