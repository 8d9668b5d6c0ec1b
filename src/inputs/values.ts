import { load as parseYaml } from 'js-yaml';
import { z } from 'zod';
import { ConfigurationError } from '../errors.ts';
import { firstIssue } from './parse.ts';

/**
 * Value schemas and text formats for inputs, shared by the CLI and every action. Each error is one
 * line that names the input.
 */

/**
 * A boolean input, spelled as `core.getBooleanInput` accepts it (YAML 1.2 core schema):
 * true, True, TRUE, false, False, FALSE. Source: @actions/core `getBooleanInput`.
 */
export const booleanInput = z
  .enum(['true', 'True', 'TRUE', 'false', 'False', 'FALSE'], {
    error: (issue) => `"${String(issue.input)}" is not one of true, false`,
  })
  .transform((v) => v.toLowerCase() === 'true');

/**
 * A decimal number written plainly (`12`, `0.5`): JavaScript's `Number()` would also take `0x2`,
 * `1e3`, `Infinity` and ' ', which no user means for a count or a duration. Numbers pass as they are.
 * @param error the message for anything else.
 * @param whole accept whole numbers only.
 */
export function plainNumber(error: string, whole = false) {
  const pattern = whole ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
  return z.preprocess(
    (v) => (typeof v === 'string' && pattern.test(v.trim()) ? Number(v.trim()) : v),
    z.number({ error }),
  );
}

/**
 * Why a shell-quoted string of words (`--k6-args`, the `k6-args` input) cannot be split, or
 * undefined when it can: a quote left open (`-e 'A=1`), which string-argv would otherwise drop
 * silently. Quotes are read as string-argv reads them: `'` or `"` opens a quoted part, the same
 * character closes it, no escapes.
 */
export function unclosedQuote(value: string): string | undefined {
  let open: string | undefined;
  let at = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (open === undefined && (c === "'" || c === '"')) {
      open = c;
      at = i;
    } else if (c === open) open = undefined;
  }
  return open === undefined ? undefined : `the ${open} at character ${at + 1} is never closed: ${value}`;
}

/** A duration in seconds above 0, given as a plain number (`120`, `0.5`). */
export const positiveSeconds = plainNumber('must be a number of seconds').pipe(
  z.number().positive({ error: 'must be more than 0 seconds' }),
);

/** One of `allowed`, with the message `"x" is not one of a, b, c`. */
export function oneOf<const T extends readonly [string, ...string[]]>(allowed: T) {
  return z.enum(allowed, {
    error: (issue) => `"${String(issue.input)}" is not one of ${allowed.join(', ')}`,
  });
}

/**
 * Parses `KEY=value` lines (blank lines and `#` comments skipped; key and value trimmed).
 * @throws ConfigurationError `input: "line" is not KEY=value`.
 */
export function parseKeyValueLines(input: string, text: string | undefined): Array<[string, string]> {
  if (!text) return [];
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((line) => {
      const eq = line.indexOf('=');
      if (eq <= 0) throw new ConfigurationError(`${input}: "${line}" is not KEY=value`);
      return [line.slice(0, eq).trim(), line.slice(eq + 1).trim()];
    });
}

/**
 * Parses a YAML input (a list or a map) and validates it with `schema`; undefined when blank.
 * @throws ConfigurationError `input: not valid YAML: …` or `input: 0.operator: … (expected e.g. example)`.
 */
export function parseYamlInput<S extends z.ZodType>(
  input: string,
  text: string | undefined,
  schema: S,
  example: string,
): z.output<S> | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ConfigurationError(`${input}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigurationError(`${input}: ${firstIssue(parsed.error, 'value')} (expected e.g. ${example})`);
  }
  return parsed.data;
}
