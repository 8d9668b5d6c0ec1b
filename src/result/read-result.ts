import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigurationError, errorMessage } from '../errors.ts';
import { RESULT_SCHEMA, type RunResult } from './result.ts';

/**
 * Reading a result JSON (`k6-distributed/result@1`, see src/result.ts) that comes from outside
 * this process: the `result` and `baseline` inputs, a baseline artifact, a report bundle from a
 * fork's run. The shape is checked here so that rendering never meets a missing field; fields
 * this schema does not name are kept as they are.
 */

const metric = z.looseObject({
  type: z.enum(['counter', 'gauge', 'rate', 'trend']),
  contains: z.enum(['time', 'data', 'default']),
  values: z.record(z.string(), z.number()),
  thresholds: z
    .record(z.string(), z.looseObject({ ok: z.boolean(), observed: z.number().optional() }))
    .optional(),
});

const check = z.looseObject({ name: z.string(), path: z.string(), passes: z.number(), fails: z.number() });

interface Group {
  name: string;
  path: string;
  groups: Group[];
  checks: z.infer<typeof check>[];
}
const group: z.ZodType<Group> = z.lazy(() =>
  z.looseObject({ name: z.string(), path: z.string(), groups: z.array(group), checks: z.array(check) }),
);

/** The schema of a result JSON; `schema` must be exactly {@link RESULT_SCHEMA}. */
export const runResultSchema = z.looseObject({
  schema: z.literal(RESULT_SCHEMA),
  verdict: z.enum(['passed', 'failed']),
  failures: z.array(z.string()),
  thresholdsOk: z.boolean(),
  script: z.string(),
  environment: z.looseObject({
    backend: z.enum(['local', 'kubernetes']),
    k6Version: z.string(),
    runners: z.number(),
    runnerImage: z.string().optional(),
    resources: z.record(z.string(), z.unknown()).optional(),
    nodeSelector: z.record(z.string(), z.string()).optional(),
    scriptHash: z.string(),
  }),
  startedAt: z.string(),
  endedAt: z.string(),
  durationS: z.number(),
  startSkewMs: z.number(),
  metrics: z.record(z.string(), metric),
  rootGroup: group,
  thresholds: z.array(
    z.looseObject({
      metric: z.string(),
      expression: z.string(),
      ok: z.boolean(),
      observed: z.number().optional(),
      abortOnFail: z.boolean(),
    }),
  ),
  runners: z.array(
    z.looseObject({
      index: z.number(),
      segment: z.string(),
      exitCode: z.number().nullable(),
      exit: z.string(),
      ok: z.boolean(),
      startOffsetMs: z.number().optional(),
      durationS: z.number().optional(),
      requests: z.number().optional(),
      rps: z.number().optional(),
      p95Ms: z.number().optional(),
      iterations: z.number().optional(),
      logTail: z.string().optional(),
    }),
  ),
});

/**
 * Checks that a parsed JSON value is a result.
 * @param what names the source in the error, e.g. `result: k6-distributed-result.json`.
 * @throws ConfigurationError `<what> is not a k6-distributed result (<first problem>)`.
 */
export function parseRunResult(value: unknown, what: string): RunResult {
  const parsed = runResultSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new ConfigurationError(`${what} is not a ${RESULT_SCHEMA} result (${where}${issue.message})`);
  }
  return parsed.data as RunResult;
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
