import { readFile } from 'node:fs/promises';
import { ConfigurationError, errorMessage } from '../errors.ts';
import { firstIssue } from '../inputs/parse.ts';
import { RESULT_SCHEMA, type RunResult, runResultSchema } from './result.ts';

/**
 * Reading a result JSON (`k6-distributed/result@1`, see result.ts) that comes from outside
 * this process: the `result` and `baseline` inputs, a baseline artifact, a report bundle from a
 * fork's run. The shape is checked here so that rendering never meets a missing field; fields
 * this schema does not name are kept as they are.
 */

/**
 * Checks that a parsed JSON value is a result.
 * @param what names the source in the error, e.g. `result: k6-distributed-result.json`.
 * @throws ConfigurationError `<what> is not a k6-distributed result (<first problem>)`.
 */
export function parseRunResult(value: unknown, what: string): RunResult {
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
