import type { z } from 'zod';
import { ConfigurationError } from '../errors.ts';

/**
 * The input toolkit shared by the CLI and every action: raw strings in (flags, `INPUT_*` via
 * `core.getInput`), validated values out, and errors as one line that names the input or flag the
 * way the user wrote it (`--grace` on the CLI, `grace` in an action).
 */

/**
 * How the caller's user names each field: schema key -> user-facing name (`graceS` -> `--grace`).
 * A key absent from the map is shown as it is.
 */
export type InputNames = Readonly<Partial<Record<string, string>>>;

/**
 * Drops blank values ('' after trimming, undefined, null) so that schema defaults apply:
 * `core.getInput` returns '' for an input that is not set. Strings are trimmed.
 */
export function blankToUndefined(raw: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const v = typeof value === 'string' ? value.trim() : value;
    if (v !== '' && v !== undefined && v !== null) given[key] = v;
  }
  return given;
}

/**
 * Turns zod issues into one line, one `name: message` per issue joined by `; `, where name is the
 * user-facing name of the issue's top-level key from `names` (`--grace: must be more than 0 seconds`).
 */
export function issuesMessage(issues: readonly z.core.$ZodIssue[], names: InputNames = {}): string {
  return issues
    .map((issue) => {
      const [top, ...rest] = issue.path.map(String);
      const name = top === undefined ? 'input' : [names[top] ?? top, ...rest].join('.');
      return `${name}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * The first of a failed parse's issues as `path: message` (`0.operator: Invalid option`), or
 * `fallback: message` when the issue is about the value as a whole.
 */
export function firstIssue(error: z.ZodError, fallback = ''): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const where = issue.path.join('.') || fallback;
  return where ? `${where}: ${issue.message}` : issue.message;
}

/**
 * Validates raw inputs with `schema` after {@link blankToUndefined}.
 * @throws ConfigurationError with {@link issuesMessage} naming every invalid input.
 */
export function parseInputs<S extends z.ZodType>(
  schema: S,
  raw: Readonly<Record<string, unknown>>,
  names: InputNames = {},
): z.output<S> {
  const parsed = schema.safeParse(blankToUndefined(raw));
  if (!parsed.success) throw new ConfigurationError(issuesMessage(parsed.error.issues, names));
  return parsed.data;
}
