import type { Command } from 'commander';
import { parseArgsStringToArgv } from 'string-argv';
import { killAllLocalRunners, LocalBackend } from '../backends/local/backend.ts';
import { buildAbResult } from '../compare/ab-result.ts';
import { parseGate, parseTolerances } from '../compare/compare.ts';
import { DEFAULT_PAIRED_LEVEL } from '../compare/paired.ts';
import { parseRunConfig, RUN_CONFIG_FLAGS } from '../config.ts';
import { ConfigurationError, EXIT_CODE, RunError } from '../errors.ts';
import { DEFAULTS } from '../inputs/defaults.ts';
import { checkOutputPaths } from '../inputs/output-paths.ts';
import { unclosedQuote } from '../inputs/values.ts';
import { resolveK6Binary } from '../k6/binary.ts';
import type { Logger } from '../log.ts';
import { writeOutputFile } from '../output-file.ts';
import { renderAbReport, renderPairedSection } from '../render/paired.ts';
import type { AbResult } from '../result/ab-schema.ts';
import { type AbSpec, checkSidesDiffer, parseEnvEntries, parseRounds, runAbRounds } from '../run/ab.ts';
import { runTest } from '../run/index.ts';

/**
 * `k6-distributed ab script.js --rounds 6 --a-env BASE_URL=http://a --b-env BASE_URL=http://b`:
 * interleaved A/B rounds on the local backend (src/run/ab.ts), one A/B result JSON
 * (src/result/ab-schema.ts) and the paired section on stdout (and in `--report`). Every flag is
 * checked before the first round. Exit codes: 0 when the paired verdict is `no regression` or
 * `inconclusive`, 1 when `regressed`, 2 bad input, 130 interrupted.
 */

/** The A/B result's default path. */
export const DEFAULT_AB_RESULT_PATH = 'k6-distributed-ab.json';

interface AbFlags {
  rounds: string;
  aEnv: string[];
  bEnv: string[];
  aK6Args?: string;
  bK6Args?: string;
  aLabel: string;
  bLabel: string;
  level: string;
  tolerances?: string;
  gate?: string;
  runners?: string;
  out: string;
  report?: string;
  k6?: string;
  k6Args?: string;
  startTimeout?: string;
  grace?: string;
  progressInterval?: string;
}

/** A flag's value split as a shell would, or a one-line error naming the flag. */
function shellWords(text: string | undefined, flag: string): string[] {
  const quote = unclosedQuote(text ?? '');
  if (quote) throw new ConfigurationError(`${flag}: ${quote}`);
  return parseArgsStringToArgv(text ?? '');
}

/** `parse()`, its ConfigurationError renamed for the CLI: `tolerances: …` becomes `--tolerances: …`. */
function asFlag<T>(flag: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw new ConfigurationError(`${flag}: ${error.message.replace(/^[a-z-]+: /, '')}`);
  }
}

/**
 * Checks every flag before any load.
 * @throws ConfigurationError naming the flag.
 */
async function parseAbFlags(script: string, extra: string[], flags: AbFlags) {
  const spec: AbSpec = {
    rounds: parseRounds(flags.rounds, '--rounds'),
    a: {
      label: flags.aLabel,
      env: parseEnvEntries(flags.aEnv, '--a-env'),
      k6Args: shellWords(flags.aK6Args, '--a-k6-args'),
    },
    b: {
      label: flags.bLabel,
      env: parseEnvEntries(flags.bEnv, '--b-env'),
      k6Args: shellWords(flags.bK6Args, '--b-k6-args'),
    },
  };
  checkSidesDiffer(spec, '--a-env/--b-env (or --a-k6-args/--b-k6-args)');
  const level = Number(flags.level);
  if (!/^0?\.\d+$/.test(flags.level.trim()) || !(level > 0 && level < 1))
    throw new ConfigurationError(`--level: "${flags.level}" is not a fraction between 0 and 1, e.g. 0.95`);
  const tolerances = asFlag('--tolerances', () => parseTolerances(flags.tolerances));
  const gate = asFlag('--gate', () => parseGate(flags.gate));
  const config = parseRunConfig(
    {
      script,
      runners: flags.runners,
      k6Args: [...shellWords(flags.k6Args, '--k6-args'), ...extra],
      k6Binary: flags.k6,
      startTimeoutS: flags.startTimeout,
      graceS: flags.grace,
      progressIntervalS: flags.progressInterval,
    },
    RUN_CONFIG_FLAGS,
  );
  if (config.k6Binary) resolveK6Binary(config.k6Binary, process.env, RUN_CONFIG_FLAGS.k6Binary);
  const outputs = [
    { input: '--out', path: flags.out },
    ...(flags.report ? [{ input: '--report', path: flags.report }] : []),
  ];
  await checkOutputPaths(outputs, [{ input: '<script>', path: script }]);
  return { spec, config, judging: { level, tolerances, gate } };
}

/**
 * Runs the `ab` command; resolves with the exit code.
 * @throws ConfigurationError for a bad flag (before any load); what runTest throws.
 */
async function abCommand(script: string, extra: string[], flags: AbFlags, log: Logger): Promise<number> {
  const { spec, config, judging } = await parseAbFlags(script, extra, flags);
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      log.warning(`${signal} received: stopping the round's runners (again to kill them at once)`);
      controller.abort();
    } else {
      log.warning(`${signal} received again: killing every runner and exiting`);
      killAllLocalRunners();
      process.exit(EXIT_CODE.interrupted);
    }
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, onSignal);
  try {
    const deps = {
      createBackend: (k6: string, workDir: string) =>
        new LocalBackend(k6, workDir, {
          onConsole: (runner, line) => process.stderr.write(`[runner ${runner}] ${line}\n`),
        }),
      log,
      signal: controller.signal,
      inputNames: RUN_CONFIG_FLAGS,
    };
    const ran = await runAbRounds(config, spec, deps, (round) => runTest(round, deps));
    if (!ran.rounds.length) throw new RunError('interrupted', 'interrupted before the first round');
    const ab: AbResult = buildAbResult({ script, a: spec.a, b: spec.b, ...ran, judging });
    await writeOutputFile(flags.out, `${JSON.stringify(ab, null, 2)}\n`);
    log.info(`A/B result written to ${flags.out}`);
    if (flags.report) await writeOutputFile(flags.report, renderAbReport(ab));
    process.stdout.write(`\n${renderPairedSection(ab)}\n`);
    if (ran.interrupted) return EXIT_CODE.interrupted;
    return ab.paired.verdict === 'regressed' ? EXIT_CODE.failed : EXIT_CODE.passed;
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Adds the `ab` command to the program. */
export function addAbCommand(program: Command, log: Logger): void {
  program
    .command('ab')
    .description(
      'interleaved A/B rounds: run the script K times on this machine, alternating A (base) and B (head) in ABBA blocks, and judge the paired differences',
    )
    .argument('<script>', 'k6 script (or k6 archive); each round runs its whole test')
    .argument('[k6-flags...]', 'k6 flags both sides share, after --, e.g. -- -e DURATION=30s')
    .option('--rounds <k>', 'number of rounds, even (A-B pairs), at least 2; 6 or more to judge well', '6')
    .option('--a-env <KEY=VALUE>', 'environment variable for A, the base (repeatable)', collect, [])
    .option('--b-env <KEY=VALUE>', 'environment variable for B, the head (repeatable)', collect, [])
    .option('--a-k6-args <flags>', 'k6 flags for A only, as one shell-quoted string')
    .option('--b-k6-args <flags>', 'k6 flags for B only, as one shell-quoted string')
    .option('--a-label <name>', 'how reports name A', 'base')
    .option('--b-label <name>', 'how reports name B', 'head')
    .option(
      '--level <fraction>',
      'two-sided confidence level of the paired intervals',
      String(DEFAULT_PAIRED_LEVEL),
    )
    .option(
      '--tolerances <text>',
      'per-metric tolerances, e.g. "p95: 5% 2ms; rps: 5%" (default: the report action\'s)',
    )
    .option(
      '--gate <metrics>',
      'metrics that decide the verdict, e.g. "p95,error-rate", or none (default: rps, p95, p99, error-rate, checks)',
    )
    .option('-n, --runners <n>', 'runners of every round', String(DEFAULTS.runners))
    .option('-o, --out <file>', 'A/B result JSON', DEFAULT_AB_RESULT_PATH)
    .option('--report <file>', 'also write the markdown report (the paired section) to this file')
    .option('--k6 <path>', 'k6 binary (default: $K6_BINARY, k6 on PATH, or the pinned build)')
    .option('--k6-args <flags>', 'k6 flags both sides share, as one shell-quoted string')
    .option(
      '--start-timeout <s>',
      'seconds runners may take to initialise their VUs',
      String(DEFAULTS.startTimeoutS),
    )
    .option('--grace <s>', "seconds allowed beyond the test's totalDuration", String(DEFAULTS.graceS))
    .option('--progress-interval <s>', 'seconds between progress lines', String(DEFAULTS.progressIntervalS))
    .action(async (script: string, extra: string[], flags: AbFlags) => {
      process.exitCode = await abCommand(script, extra, flags, log);
    });
}
