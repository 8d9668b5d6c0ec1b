import { readFile } from 'node:fs/promises';
import { ConfigurationError, errorMessage } from '../errors.ts';
import { firstIssue } from '../inputs/parse.ts';
import { RESULT_SCHEMA, type RunResult, runResultSchema } from './schema.ts';

/**
 * Reading a result JSON (`k6-distributed/result@1`, see result.ts) that comes from outside
 * this process: the `result` and `baseline` inputs, a baseline artifact, a report bundle from a
 * fork's run. The shape is checked here so that rendering never meets a missing field; fields
 * this schema does not name are kept as they are.
 */

/** How deep a result's JSON may nest (its deepest part, nested groups, stays far below). */
export const MAX_JSON_DEPTH = 64;

/**
 * Refuses JSON that nests deeper than {@link MAX_JSON_DEPTH} (groups in groups 100,000 deep would
 * overflow the stack of the recursive validation and rendering). Walks without recursion.
 * @throws ConfigurationError `<what> nests deeper than 64 levels`.
 */
export function checkJsonDepth(value: unknown, what: string): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_JSON_DEPTH)
      throw new ConfigurationError(`${what} nests deeper than ${MAX_JSON_DEPTH} levels`);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}

/**
 * Checks that a parsed JSON value is a result.
 * @param what names the source in the error, e.g. `result: k6-distributed-result.json`.
 * @throws ConfigurationError `<what> is not a k6-distributed result (<first problem>)`.
 */
export function parseRunResult(value: unknown, what: string): RunResult {
  checkJsonDepth(value, what);
  const parsed = runResultSchema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigurationError(`${what} is not a ${RESULT_SCHEMA} result (${firstIssue(parsed.error)})`);
  }
  return parsed.data;
}

/**
 * Reads and checks a result JSON file.
 * @param what names the input in errors, e.g. `result` or `baseline`.
 * @throws ConfigurationError when the file is missing, is not JSON, or is not a result.
 */
export async function readRunResult(path: string, what: string): Promise<RunResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ConfigurationError(
      `${what}: cannot read ${path} (${missing ? 'no such file; did the run step write it?' : errorMessage(error)})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError(`${what}: ${path} is not JSON (${errorMessage(error)})`);
  }
  return parseRunResult(json, `${what}: ${path}`);
}
