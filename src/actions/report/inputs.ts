import { z } from 'zod';
import { parseGate, parseTolerances } from '../../compare/compare.ts';
import { SCRIPT_CHANGE_POLICIES } from '../../compare/verdict.ts';
import { DEFAULTS } from '../../inputs/defaults.ts';
import { parseInputs } from '../../inputs/parse.ts';
import { booleanInput, oneOf } from '../../inputs/values.ts';
import { parseDashboardUrl } from '../../render/dashboard.ts';

/**
 * The inputs of the `report` action (actions/report/action.yml), read and validated in one place.
 * `core.getInput` returns '' for an input that is not set: '' becomes undefined before parsing so
 * that defaults apply. Errors are one line per input: `key: must be 1 to 64 letters, …`.
 */

/** Every input name, as in action.yml. */
export const INPUT_NAMES = [
  'mode',
  'result',
  'github-token',
  'key',
  'title',
  'baseline',
  'baseline-workflow',
  'gate',
  'tolerances',
  'script-change',
  'fail-on-regression',
  'fail-on-inconclusive',
  'comment-author',
  'retention-days',
  'history-runs',
  'history-branch',
  'history-branch-read',
  'history-max-runs',
  'dashboard-url',
  'junit-path',
] as const;

/** When the comment reads the history branch: to fill in expired artifacts, or instead of them. */
export const HISTORY_BRANCH_READS = ['fallback', 'always'] as const;

/** What the action does; `auto` picks one from the event (see {@link resolveMode}). */
export const MODES = ['auto', 'store', 'comment', 'bundle', 'post-bundle'] as const;
export type Mode = (typeof MODES)[number];

/** A number of runs from `min` to `max`: `must be 0 to 100 runs` otherwise. */
function runs(min: number, max: number) {
  const range = `must be ${min} to ${max} runs`;
  return z.coerce
    .number({ error: 'must be a whole number of runs' })
    .int({ error: 'must be a whole number of runs' })
    .min(min, { error: range })
    .max(max, { error: range });
}

/** Every input of action.yml by name, and what it becomes (the schema is the type). */
const schema = z
  .object({
    mode: oneOf(MODES).default(DEFAULTS.mode),
    result: z.string().default(DEFAULTS.resultPath),
    'github-token': z.string({ error: 'is required (default: the workflow token, github.token)' }),
    key: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, ".", "_" or "-"' })
      .default(DEFAULTS.key),
    title: z.string().max(200, { error: 'must be at most 200 characters' }).optional(),
    baseline: z.string().optional(),
    'baseline-workflow': z.string().optional(),
    gate: z.string().optional(),
    tolerances: z.string().optional(),
    'script-change': oneOf(SCRIPT_CHANGE_POLICIES).default('gate'),
    'fail-on-regression': booleanInput.default(DEFAULTS.failOnRegression),
    'fail-on-inconclusive': booleanInput.default(DEFAULTS.failOnInconclusive),
    'comment-author': z.string().default(DEFAULTS.commentAuthor),
    'retention-days': z.coerce
      .number({ error: 'must be a whole number of days' })
      .int({ error: 'must be a whole number of days' })
      .min(1, { error: 'must be 1 to 90 days' })
      .max(90, { error: 'must be 1 to 90 days' })
      .optional(),
    'history-runs': runs(0, 100).default(DEFAULTS.historyRuns),
    'history-branch': z
      .string()
      .regex(/^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/-]{1,100}(?<![./])$/, {
        error: 'must be a branch name: 1 to 100 letters, digits, ".", "_", "-" or "/"',
      })
      .refine((v) => !v.endsWith('.lock'), { error: 'must be a branch name, not ending in .lock' })
      .optional(),
    'history-branch-read': oneOf(HISTORY_BRANCH_READS).default(DEFAULTS.historyBranchRead),
    'history-max-runs': runs(1, 100_000).default(DEFAULTS.historyMaxRuns),
    'dashboard-url': z.string().optional(),
    'junit-path': z.string().optional(),
  } satisfies Record<(typeof INPUT_NAMES)[number], z.ZodType>)
  .transform((v) => ({
    mode: v.mode,
    /** Path of this run's result JSON. */
    resultPath: v.result,
    token: v['github-token'],
    /** The user key: one comment, one baseline and one bundle per key. */
    key: v.key,
    ...(v.title ? { title: v.title } : {}),
    /** A result JSON to compare with instead of the stored baseline. */
    ...(v.baseline ? { baselinePath: v.baseline } : {}),
    /** The workflow whose base-branch runs hold the baseline (id or file name); default this one. */
    ...(v['baseline-workflow'] ? { baselineWorkflow: v['baseline-workflow'] } : {}),
    /** @throws ConfigurationError `gate: unknown metric …` (thrown through the parse). */
    gate: parseGate(v.gate),
    tolerances: parseTolerances(v.tolerances),
    /** What a changed script (scriptHash) does to the gate: `gate` keeps it, `ungated` turns it off. */
    scriptChange: v['script-change'],
    failOnRegression: v['fail-on-regression'],
    /** Whether an `inconclusive` verdict fails the step too (default: it does not). */
    failOnInconclusive: v['fail-on-inconclusive'],
    /** Login of the account the token comments as. */
    commentAuthor: v['comment-author'],
    /** Retention of uploaded artifacts in days (default: the repository's setting). */
    ...(v['retention-days'] === undefined ? {} : { retentionDays: v['retention-days'] }),
    /** How many successful base-branch runs the trend and the between-run noise read (0: the baseline alone). */
    historyRuns: v['history-runs'],
    /** The branch that keeps every run's key figures and the trend page (src/github/history-branch.ts). */
    ...(v['history-branch'] ? { historyBranch: v['history-branch'] } : {}),
    /** `fallback`: the branch fills in runs whose artifacts expired; `always`: the history is the branch's. */
    historyBranchRead: v['history-branch-read'],
    /** Runs kept per key in the history branch (store); the oldest beyond are removed. */
    historyMaxRuns: v['history-max-runs'],
    /** @throws ConfigurationError `dashboard-url: … is not a URL` (thrown through the parse). */
    ...optionalDashboard(v['dashboard-url']),
    /** Where modes comment and bundle write the JUnit report with the comparison (src/render/junit.ts). */
    ...(v['junit-path'] ? { junitPath: v['junit-path'] } : {}),
  }));

function optionalDashboard(value: string | undefined): { dashboardUrl?: string } {
  const url = parseDashboardUrl(value);
  return url ? { dashboardUrl: url } : {};
}

/** The validated inputs of the report action. */
export type ReportActionInputs = z.output<typeof schema>;

/**
 * Validates raw inputs (name -> string, '' when not set).
 * @throws ConfigurationError naming every invalid input, e.g. `gate: unknown metric "p97"; use …`.
 */
export function parseReportInputs(raw: Record<string, string | undefined>): ReportActionInputs {
  return parseInputs(schema, raw);
}

/** Reads every input through `getInput` (core.getInput in the action) and validates them. */
export function readReportInputs(getInput: (name: string) => string): ReportActionInputs {
  return parseReportInputs(Object.fromEntries(INPUT_NAMES.map((name) => [name, getInput(name)])));
}
