import { readFile } from 'node:fs/promises';
import { ConfigurationError, errorMessage } from '../errors.ts';
import { firstIssue } from '../inputs/parse.ts';
import { RESULT_SCHEMA, type RunResult, runResultSchema } from './schema.ts';

/**
 * Reading a result JSON (`k6-distributed/result@1`, see schema.ts) that comes from outside
 * this process: the `result` and `baseline` inputs, a baseline artifact, a report bundle from a
 * fork's run. The shape is checked here so that rendering never meets a missing field; fields
 * this schema does not name are kept as they are.
 */

/**
 * How deep a result's JSON may nest outside its groups: every part of a result but its groups
 * stays below 10 levels, so more is an edited or forged document.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * How deep groups may nest (`rootGroup`, `summary.root_group`: a group's `groups` array). k6 has no
 * limit of its own; each level is two JSON levels (the group and its `groups` array), so they are
 * counted apart from {@link MAX_JSON_DEPTH}, and a real script's 30 nested groups are 30 here. 100
 * keeps the recursive validation and rendering far from the stack's end (measured: 300 nested
 * groups validate and render, 1,000 overflow).
 */
export const MAX_GROUP_DEPTH = 100;

/**
 * Refuses JSON that nests deeper than {@link MAX_JSON_DEPTH} levels outside groups, or groups
 * nested deeper than {@link MAX_GROUP_DEPTH} (groups in groups 100,000 deep would overflow the stack
 * of the recursive validation and rendering). Walks without recursion. An element of an array
 * under the key `groups` counts as one group level instead of two JSON levels.
 * @throws ConfigurationError `<what> nests deeper than 64 levels` or `<what> nests groups deeper
 *   than 100 levels`.
 */
export function checkJsonDepth(value: unknown, what: string): void {
  const stack: Array<[unknown, number, number]> = [[value, 1, 0]];
  while (stack.length > 0) {
    const [node, depth, groupLevels] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_JSON_DEPTH)
      throw new ConfigurationError(`${what} nests deeper than ${MAX_JSON_DEPTH} levels`);
    if (groupLevels > MAX_GROUP_DEPTH)
      throw new ConfigurationError(`${what} nests groups deeper than ${MAX_GROUP_DEPTH} levels`);
    for (const [key, child] of Object.entries(node)) {
      if (key === 'groups' && Array.isArray(child) && !Array.isArray(node)) {
        for (const group of child) stack.push([group, depth, groupLevels + 1]);
      } else stack.push([child, depth + 1, groupLevels]);
    }
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
