import { ConfigurationError } from '../errors.ts';

/**
 * The user's extra k6 flags: which k6 command each goes to (`k6 archive`, `k6 run`, the
 * environment, or the product itself), which ones the product refuses because it sets them on
 * every runner, and the boolean environment variables k6 reads the way Go does.
 */

/** Flags this product sets on every runner; a user giving one would break the distribution. */
const RESERVED_FLAGS: Record<string, string> = {
  '--execution-segment': 'each runner gets its own segment',
  '--execution-segment-sequence': 'the sequence is set from the number of runners',
  '--paused': 'runners always start paused and are started together',
  '-p': 'runners always start paused and are started together',
  '--address': 'each runner gets its own REST API address',
  '-a': 'each runner gets its own REST API address',
  '--summary-export': 'each runner writes its summary where the aggregator reads it',
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

/** The user's k6 flags, sorted by where each goes ({@link splitK6Args}). */
export interface SplitK6Args {
  /** Options for `k6 archive` (they are stored in the archive), in the order given. */
  archiveArgs: string[];
  /** Flags only `k6 run` takes, each with its value, in the order given. */
  runArgs: string[];
  /** Flags the product handles itself, by name: `--summary-mode` -> `full`. */
  productArgs: Record<string, string>;
  /** The `-e NAME=value` values, by name. */
  env: Record<string, string>;
}

/**
 * Splits the user's extra k6 flags into those for `k6 archive` (options: they are stored in the
 * archive), those only `k6 run` takes, and the `-e`/`--env` values (by name, the last one wins as
 * in k6), which every k6 process gets in its environment.
 * @param args the flags as separate words (`['--vus', '10', '-e', 'A=b']`); `--flag=value` is one word.
 * @throws ConfigurationError for a flag the product sets itself, or an `-e` that is not NAME=value.
 */
export function splitK6Args(args: readonly string[]): SplitK6Args {
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

/**
 * Whether a boolean environment variable is true as k6 reads one (Go `strconv.ParseBool`: `1`, `t`,
 * `T`, `true`, `TRUE`, `True`); unset or anything else is false.
 */
export function envTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

/** Whether k6 would print without colours: `--no-color` among the user's flags, or `NO_COLOR` (any value) or `K6_NO_COLOR` set (k6 `cmd/state`). */
export function noColorGiven(k6Args: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  return k6Args.includes('--no-color') || env.NO_COLOR !== undefined || envTrue(env.K6_NO_COLOR);
}
