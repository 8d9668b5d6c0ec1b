import { readAbResultIfAny, reportAb } from './ab.ts';
import type { ActionContext } from './context.ts';
import type { Mode, ReportActionInputs } from './inputs.ts';
import { pullRequestOf, type ReportDeps, type ReportOutcome, type ResolvedMode } from './outcome.ts';
import { postBundle } from './post-bundle.ts';
import { compareOnPullRequest } from './pull-request.ts';
import { store } from './store.ts';

/**
 * The logic of the `report` action, one function per mode. It takes its clients and context as
 * arguments and returns what the runner turns into outputs, annotations and the step's outcome;
 * the job summary is written through `deps.writeSummary` as soon as it exists, before any call
 * that may fail, so it is there on fork PRs and on errors.
 *
 * - `store`: upload this run's result and metadata as the baseline artifact (pushes to a branch);
 * - `comment`: compare with the baseline of the PR's base branch and upsert the sticky comment;
 * - `bundle`: the same comparison on a fork's PR (read-only token), written as an artifact;
 * - `post-bundle`: in a `workflow_run` workflow, download the bundle and post it on the PR.
 *
 * An A/B result in `result` (src/result/ab-schema.ts) goes to ab.ts: its paired section is the report.
 * Each mode is its own file: store.ts, pull-request.ts (comment and bundle), post-bundle.ts;
 * outcome.ts holds what they return and the parts they share.
 */

/**
 * Picks the mode for `auto`: `pull_request`/`pull_request_target` -> `comment`, or `bundle` when
 * the PR comes from a fork; `workflow_run` -> `post-bundle`; anything else (push, schedule,
 * workflow_dispatch) -> `store`.
 */
export function resolveMode(mode: Mode, ctx: ActionContext): ResolvedMode {
  if (mode !== 'auto') return mode;
  if (ctx.eventName === 'workflow_run') return 'post-bundle';
  const pr = pullRequestOf(ctx);
  if (pr) return pr.fromFork && ctx.eventName === 'pull_request' ? 'bundle' : 'comment';
  return 'store';
}

/** Runs the action's logic for the inputs. */
export async function report(inputs: ReportActionInputs, deps: ReportDeps): Promise<ReportOutcome> {
  const mode = resolveMode(inputs.mode, deps.ctx);
  deps.log(`mode: ${mode}${inputs.mode === 'auto' ? ` (auto, event ${deps.ctx.eventName})` : ''}`);
  // An A/B result (interleaved rounds of base and head) is judged on its own pairs (ab.ts).
  const ab = mode === 'post-bundle' ? undefined : await readAbResultIfAny(inputs.resultPath);
  if (ab) return reportAb(inputs, deps, mode, ab);
  switch (mode) {
    case 'store':
      return store(inputs, deps);
    case 'comment':
    case 'bundle':
      return compareOnPullRequest(inputs, deps, mode);
    case 'post-bundle':
      return postBundle(inputs, deps);
  }
}
