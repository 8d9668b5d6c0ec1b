/**
 * What a comparison is made against: the baseline run (where it came from and what was found) and
 * the base branch's recent runs. A contract between src/github/ (which finds them), src/compare/
 * and the PR comment (which show them), and the fork bundle (which carries {@link BaselineInfo}).
 */

import { z } from 'zod';
import type { RunResult } from '../result/schema.ts';

/** The workflow run whose result is the baseline (or whose artifact expired). */
export const baselineRunSchema = z.object({
  /** The GitHub workflow run id. */
  id: z.number().int(),
  /** Its page; rebuilt from the event, never taken from a bundle. */
  url: z.string(),
  sha: z.string(),
  /** ISO 8601 time the run was created. */
  createdAt: z.string().optional(),
});

/** Where the baseline came from and what was found (a report bundle carries it without `run.url`). */
export const baselineInfoSchema = z.object({
  /** `artifact`: a stored run on the base branch; `file`: the `baseline` input. */
  source: z.enum(['artifact', 'file']),
  state: z.enum(['found', 'none', 'expired']),
  /** The base branch. */
  branch: z.string().optional(),
  /** The artifact name looked up. */
  artifactName: z.string().optional(),
  /** The workflow run whose result is the baseline (or whose artifact expired). */
  run: baselineRunSchema.optional(),
  /** The merge-base of the pull request, when known. */
  mergeBase: z.string().optional(),
  /** `true` when the run is at the merge-base. */
  atMergeBase: z.boolean().optional(),
  /** ISO time the artifact expired (state `expired`). */
  expiredAt: z.string().optional(),
  /** The `baseline` input (source `file`). */
  file: z.string().optional(),
  /** How many runs of the base branch were looked at. */
  runsChecked: z.number().optional(),
});
export type BaselineInfo = z.infer<typeof baselineInfoSchema>;

/** One successful base-branch run of the history and the result it stored. */
export interface HistoryRun {
  run: { id: number; sha: string; createdAt?: string };
  result: RunResult;
}

/** The base branch's recent results, for the trend and the between-run noise (src/github/baseline.ts `findHistory`). */
export interface BaseHistory {
  /** Oldest first. */
  runs: HistoryRun[];
  /** How many runs were asked for (the `history-runs` input). */
  requested: number;
  /** Runs left out because their result artifact was missing, expired or unreadable. */
  skipped: number;
  /** Runs whose key figures came from the history branch (`history-branch`) instead of an artifact. */
  fromBranch?: { branch: string; runs: number };
}
