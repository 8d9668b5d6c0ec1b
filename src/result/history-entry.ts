import { z } from 'zod';
import { K6_METRIC } from '../k6/metrics.ts';
import {
  type MetricResult,
  metricResultSchema,
  RESULT_SCHEMA,
  type RunResult,
  runEnvironmentSchema,
} from './schema.ts';

/**
 * One run in the history branch (the report action's `history-branch`): the key figures of a
 * result, small enough to keep hundreds per key for years, where the result artifact expires with
 * the repository's retention. An entry keeps, of the result's metrics, only the ones the comparison
 * reads (RPS, latency percentiles of all and of expected responses, the error rate, the checks
 * rate) with only their key values, and each percentile's uncertainty band where the result has
 * one (`percentileBands`: the merge's band for the percentiles a threshold judges) and the run's
 * in-run intervals (`uncertainty`); no log tails,
 * no runners, no thresholds, no timeline. Nothing in it is a secret: the environment is what the
 * comparison checks (runners, image, resources, node selector, script hash, k6 version).
 *
 * The read side turns an entry back into a result ({@link entryAsResult}) that holds only those
 * metrics, so the trend and the between-run noise read the branch exactly as they read artifacts.
 */

/** The schema name of an entry. */
export const HISTORY_ENTRY_SCHEMA = 'k6-distributed/history-entry@1';

/** The metrics an entry keeps, and of each the values kept. */
const KEPT: Record<string, readonly string[]> = {
  [K6_METRIC.httpReqs]: ['count', 'rate'],
  [K6_METRIC.httpReqFailed]: ['rate', 'passes', 'fails'],
  [K6_METRIC.checks]: ['rate', 'passes', 'fails'],
  [K6_METRIC.httpReqDuration]: ['count', 'avg', 'min', 'max', 'med', 'p(50)', 'p(90)', 'p(95)', 'p(99)'],
  [K6_METRIC.httpReqDurationExpected]: [
    'count',
    'avg',
    'min',
    'max',
    'med',
    'p(50)',
    'p(90)',
    'p(95)',
    'p(99)',
  ],
};

/** One entry of the history branch (a file `<key>/runs/<time>-<run id>-<attempt>.json`). */
export const historyEntrySchema = z.object({
  schema: z.literal(HISTORY_ENTRY_SCHEMA),
  /** The report's key (one history per key). */
  key: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  /** The branch the run tested, e.g. `main`. */
  branch: z.string().min(1).max(255),
  /** The commit the run tested. */
  sha: z.string().regex(/^[0-9a-f]{7,64}$/),
  /** `owner/repo`. */
  repository: z.string().max(200),
  /** The GitHub workflow run that stored it, and its attempt. */
  workflowRunId: z.number().int().positive(),
  runAttempt: z.number().int().positive(),
  /** The load test's own id (the result's `runId`, tag `k6d_run`), when the result has one. */
  runId: z.string().max(100).optional(),
  /** ISO 8601: the synchronised start of the test (the result's `startedAt`), and when it was stored. */
  startedAt: z.string().max(40),
  storedAt: z.string().max(40),
  durationS: z.number().min(0),
  /** The run's own verdict (its thresholds on the aggregate and runner completion). */
  verdict: z.enum(['passed', 'failed']),
  environment: runEnvironmentSchema,
  /** The kept metrics: key values only, with `percentileBands` where the result had them. */
  metrics: z.record(z.string(), metricResultSchema),
  /**
   * The result's in-run intervals (src/result/uncertainty-schema.ts, about 1 kB), where it had them:
   * the verdict takes the history's own in-run part out of its spread.
   */
  uncertainty: z.looseObject({ level: z.number() }).optional(),
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

/** Where and by what the entry was stored. */
export interface EntryOrigin {
  key: string;
  branch: string;
  sha: string;
  repository: string;
  workflowRunId: number;
  runAttempt: number;
  /** ISO 8601 time of the store. */
  storedAt: string;
}

function keep(metric: MetricResult, keys: readonly string[]): MetricResult {
  const values = Object.fromEntries(
    keys.flatMap((k) => (k in metric.values ? [[k, metric.values[k]!]] : [])),
  );
  const bands = metric.percentileBands
    ? Object.fromEntries(Object.entries(metric.percentileBands).filter(([k]) => keys.includes(k)))
    : {};
  return {
    type: metric.type,
    contains: metric.contains,
    values,
    ...(Object.keys(bands).length > 0 ? { percentileBands: bands } : {}),
  };
}

/** The entry of a result: its key figures and their uncertainty, where and when it ran. */
export function historyEntry(result: RunResult, origin: EntryOrigin): HistoryEntry {
  const metrics: Record<string, MetricResult> = {};
  for (const [name, keys] of Object.entries(KEPT)) {
    const metric = result.metrics[name];
    if (metric) metrics[name] = keep(metric, keys);
  }
  return {
    schema: HISTORY_ENTRY_SCHEMA,
    ...origin,
    ...(result.runId ? { runId: result.runId } : {}),
    startedAt: result.startedAt,
    durationS: result.durationS,
    verdict: result.verdict,
    environment: result.environment,
    metrics,
    ...(result.uncertainty ? { uncertainty: result.uncertainty } : {}),
  };
}

/**
 * The entry's file name: its start time (sortable: the oldest first by name), then the workflow
 * run id and attempt, which make it unique. `2026-01-10T08-00-00Z-501-1.json`.
 */
export function entryFileName(entry: HistoryEntry): string {
  const time = new Date(entry.startedAt);
  const stamp = Number.isNaN(time.getTime())
    ? '0000-00-00T00-00-00Z'
    : time
        .toISOString()
        .replace(/\.\d+Z$/, 'Z')
        .replace(/:/g, '-');
  return `${stamp}-${entry.workflowRunId}-${entry.runAttempt}.json`;
}

/**
 * A result made of an entry: its metrics and environment, no thresholds, runners or groups. It is
 * what the comparison's history reads (src/compare/history.ts reads only key metrics and the
 * environment), and it passes the result schema, so a report bundle can carry it.
 */
export function entryAsResult(entry: HistoryEntry): RunResult {
  const ended = new Date(Date.parse(entry.startedAt) + entry.durationS * 1000);
  return {
    schema: RESULT_SCHEMA,
    verdict: entry.verdict,
    failures: [],
    thresholdsOk: entry.verdict === 'passed',
    script: `history entry of ${entry.key}`,
    environment: entry.environment,
    startedAt: entry.startedAt,
    endedAt: Number.isNaN(ended.getTime()) ? entry.startedAt : ended.toISOString(),
    durationS: entry.durationS,
    startSkewMs: 0,
    metrics: entry.metrics,
    rootGroup: { name: '', path: '', groups: [], checks: [] },
    thresholds: [],
    runners: [],
    ...(entry.runId ? { runId: entry.runId } : {}),
    ...(entry.uncertainty ? { uncertainty: entry.uncertainty } : {}),
  };
}
