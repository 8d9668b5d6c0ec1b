import { parseArgsStringToArgv } from 'string-argv';
import { z } from 'zod';
import { DEFAULTS } from './inputs/defaults.ts';
import { parseInputs } from './inputs/parse.ts';
import { plainNumber, positiveSeconds, unclosedQuote } from './inputs/values.ts';

/**
 * The run configuration, validated in one place for the CLI and the actions. Inputs arrive as
 * strings (flags, `INPUT_*`); blank means "not given" so that the defaults (inputs/defaults.ts) apply.
 */

/** k6 flags as one string (shell-quoted, `--tag "a=b c"`) or already split into words. */
const k6ArgsSchema = z
  .union([
    z.string().superRefine((v, ctx) => {
      const problem = unclosedQuote(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    z.array(z.string()),
  ])
  .default([])
  .transform((v) => (typeof v === 'string' ? parseArgsStringToArgv(v) : v));

export const runConfigSchema = z.object({
  /** Path of the k6 script (or k6 archive). */
  script: z.string({ error: 'is required' }).min(1, { error: 'is required' }),
  /** Number of runners N (each runs execution segment i/N:(i+1)/N). */
  runners: plainNumber('must be a whole number', true)
    .pipe(
      z
        .number()
        .int({ error: 'must be a whole number' })
        .min(1, { error: 'must be at least 1' })
        .max(1000, { error: 'must be at most 1000' }),
    )
    .default(DEFAULTS.runners),
  /** Extra k6 flags for every runner. */
  k6Args: k6ArgsSchema,
  /** Where the result JSON goes. */
  resultPath: z.string().min(1).default(DEFAULTS.resultPath),
  /** Where the markdown report goes, if anywhere. */
  reportPath: z.string().min(1).optional(),
  /**
   * Where the HTML report goes, if anywhere: named here so that it is checked with the other
   * outputs before the load (src/inputs/output-paths.ts); the caller writes it.
   */
  htmlPath: z.string().min(1).optional(),
  /**
   * Where the JUnit XML report goes, if anywhere (src/render/junit.ts: one test case per threshold,
   * check and runner): checked with the other outputs before the load; the caller writes it.
   */
  junitPath: z.string().min(1).optional(),
  /**
   * The k6 binary of the preflight (and of the local backend's runners): an xk6 build that matches
   * a custom runner image. Resolved from K6_BINARY, PATH and the pinned build when absent.
   */
  k6Binary: z.string().min(1).optional(),
  /** How long runners may take to reach status 4, in s. */
  startTimeoutS: positiveSeconds.default(DEFAULTS.startTimeoutS),
  /** Time allowed beyond the test's totalDuration, in s. */
  graceS: positiveSeconds.default(DEFAULTS.graceS),
  /** Seconds between progress lines. */
  progressIntervalS: positiveSeconds.default(DEFAULTS.progressIntervalS),
});

/** The validated run configuration. */
export type RunConfig = z.infer<typeof runConfigSchema>;

/** A key of the run configuration. */
export type RunConfigKey = keyof z.input<typeof runConfigSchema>;

/** Each configuration key as the run and root actions name it (action.yml inputs). */
export const RUN_CONFIG_INPUTS = {
  script: 'script',
  runners: 'runners',
  k6Args: 'k6-args',
  resultPath: 'result-path',
  junitPath: 'junit-path',
  k6Binary: 'k6-binary',
  startTimeoutS: 'start-timeout',
  graceS: 'grace',
  progressIntervalS: 'progress-interval',
} as const satisfies Partial<Record<RunConfigKey, string>>;

/** Each configuration key as the CLI's `run` command names it (`<script>` is its argument). */
export const RUN_CONFIG_FLAGS = {
  script: '<script>',
  runners: '--runners',
  k6Args: '--k6-args',
  resultPath: '--out',
  reportPath: '--report',
  htmlPath: '--html',
  junitPath: '--junit',
  k6Binary: '--k6',
  startTimeoutS: '--start-timeout',
  graceS: '--grace',
  progressIntervalS: '--progress-interval',
} as const satisfies Record<RunConfigKey, string>;

/**
 * Validates raw inputs (strings, '' for "not given") into a {@link RunConfig}.
 * @param names how the caller's user names each key (`{ graceS: '--grace' }` on the CLI); a key
 *   without a name is shown as the key.
 * @throws ConfigurationError with one `name: problem` per invalid input on one line
 *   (`--grace: must be more than 0 seconds`).
 */
export function parseRunConfig(
  raw: Partial<Record<RunConfigKey, unknown>>,
  names: Partial<Record<RunConfigKey, string>> = {},
): RunConfig {
  return parseInputs(runConfigSchema, raw, names);
}
