/**
 * The one logging shape of the product. `@actions/core` satisfies it as it is (`core.info`,
 * `core.warning`, `core.error`, `core.debug`), so the actions pass `core`; the CLI passes
 * {@link consoleLogger}. Every module that reports progress or problems takes a `Logger`.
 * (The pattern follows github/codeql-action `src/logging.ts`.)
 */
export interface Logger {
  /** Progress: what the run is doing (stage changes, the live progress line). */
  info(message: string): void;
  /** Something the user should look at that does not by itself fail the run. */
  warning(message: string): void;
  /** Something that fails the run, as one line. */
  error(message: string): void;
  /** Detail for debugging (the action log shows it with ACTIONS_STEP_DEBUG; the CLI with K6D_DEBUG=1). */
  debug(message: string): void;
}

/**
 * The CLI's logger: every line to stderr (stdout carries the report), prefixed with
 * `[k6-distributed]`; `debug` lines only when the environment has `K6D_DEBUG=1`.
 */
export function consoleLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const prefix = '[k6-distributed]';
  return {
    info: (m) => write(`${prefix} ${m}\n`),
    warning: (m) => write(`${prefix} warning: ${m}\n`),
    error: (m) => write(`${prefix} error: ${m}\n`),
    debug: (m) => {
      if (process.env.K6D_DEBUG === '1') write(`${prefix} debug: ${m}\n`);
    },
  };
}

/** A logger that drops everything (tests, library callers that want silence). */
export const silentLogger: Logger = { info() {}, warning() {}, error() {}, debug() {} };
