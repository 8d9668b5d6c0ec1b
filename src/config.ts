import { parseArgsStringToArgv } from 'string-argv';
import { z } from 'zod';
import { ConfigurationError } from './errors.ts';

/**
 * The run configuration, validated in one place for the CLI and the actions. Inputs arrive as
 * strings (flags, `INPUT_*`); '' means "not given" and is mapped to undefined before parsing so
 * that defaults apply (`core.getInput` returns '' for unset inputs).
 */

const positiveSeconds = (name: string, fallback: number) =>
  z.coerce
    .number({ error: `must be a number of seconds (${name})` })
    .positive({ error: `must be more than 0 seconds (${name})` })
    .default(fallback);

/** k6 flags as one string (shell-quoted, `--tag "a=b c"`) or already split into words. */
const k6ArgsSchema = z
  .union([z.string(), z.array(z.string())])
  .default([])
  .transform((v) => (typeof v === 'string' ? parseArgsStringToArgv(v) : v));

export const runConfigSchema = z.object({
  /** Path of the k6 script (or k6 archive). */
  script: z.string({ error: 'is required' }).min(1, { error: 'is required' }),
  /** Number of runners N (each runs execution segment i/N:(i+1)/N). */
  runners: z.coerce
    .number({ error: 'must be a whole number' })
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(1000, { error: 'must be at most 1000' })
    .default(1),
  /** Extra k6 flags for every runner. */
  k6Args: k6ArgsSchema,
  /** Where the result JSON goes. */
  resultPath: z.string().min(1).default('k6-distributed-result.json'),
  /** Where the markdown report goes, if anywhere. */
  reportPath: z.string().min(1).optional(),
  /** k6 binary; resolved from K6_BINARY, PATH and the pinned build when absent. */
  k6Binary: z.string().min(1).optional(),
  /** How long runners may take to reach status 4, in s. */
  startTimeoutS: positiveSeconds('start timeout', 300),
  /** Time allowed beyond the test's totalDuration, in s. */
  graceS: positiveSeconds('grace', 120),
  /** Seconds between progress lines. */
  progressIntervalS: positiveSeconds('progress interval', 10),
});

/** The validated run configuration. */
export type RunConfig = z.infer<typeof runConfigSchema>;

function blankToUndefined(raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== '' && v !== undefined && v !== null));
}

/**
 * Validates raw inputs into a {@link RunConfig}.
 * @throws ConfigurationError with one line per invalid input (`runners: runners must be at least 1`).
 */
export function parseRunConfig(raw: Record<string, unknown>): RunConfig {
  const parsed = runConfigSchema.safeParse(blankToUndefined(raw));
  if (!parsed.success) {
    const message = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`)
      .join('; ');
    throw new ConfigurationError(message);
  }
  return parsed.data;
}
