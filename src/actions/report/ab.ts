import { readFile } from 'node:fs/promises';
import { rejudgeAb } from '../../compare/ab-result.ts';
import { ConfigurationError } from '../../errors.ts';
import { firstIssue } from '../../inputs/parse.ts';
import { commentMarker, fitBodies } from '../../pr-comment/comment.ts';
import type { Fitted } from '../../pr-comment/fit.ts';
import { defaultTitle } from '../../pr-comment/sections.ts';
import { escapeMarkdown } from '../../render/format.ts';
import { pairedHeadline, renderPairedSection } from '../../render/paired.ts';
import { AB_RESULT_SCHEMA, type AbResult, abResultSchema } from '../../result/ab-schema.ts';
import { checkJsonDepth } from '../../result/read-result.ts';
import type { ReportActionInputs } from './inputs.ts';
import {
  emptyOutputs,
  pullRequestOf,
  type ReportDeps,
  type ReportOutcome,
  type ResolvedMode,
} from './outcome.ts';
import { deliverReport } from './pull-request.ts';

/**
 * The report action on an A/B result (`result` names a `k6-distributed/ab@1` file, written by the
 * run action's `ab-rounds` or `k6-distributed ab`): modes `comment` and `bundle` post (or bundle)
 * the paired section instead of a comparison with a stored baseline, judged again here with this
 * step's `gate` and `tolerances`; mode `post-bundle` judges a fork's rounds the same way
 * (post-bundle.ts). Mode `store` refuses it: a baseline is one run of the base branch.
 */

/**
 * The `result` input's file when it is an A/B result, checked; undefined when it is anything else
 * (a single run's result, or a file the single-run path reports on).
 * @throws ConfigurationError naming the input when it says it is an A/B result but is not one.
 */
export async function readAbResultIfAny(file: string, input = 'result'): Promise<AbResult | undefined> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null || (json as { schema?: unknown }).schema !== AB_RESULT_SCHEMA)
    return undefined;
  checkJsonDepth(json, `${input}: ${file}`);
  const parsed = abResultSchema.safeParse(json);
  if (!parsed.success)
    throw new ConfigurationError(`${input}: ${file} is not a valid A/B result (${firstIssue(parsed.error)})`);
  return parsed.data;
}

/**
 * The comment body and job summary of an A/B result: the title, a note (whose figures these are),
 * the paired section. The marker is the first line.
 */
export function renderAbBodies(
  ab: AbResult,
  marker: string,
  title: string,
  note?: string,
): { comment: Fitted; summary: Fitted } {
  // The first line says the verdict, its level and its reference.
  const p = ab.paired;
  const verdict = `${pairedHeadline(ab).split(' ')[0]} ${p.verdict} on paired A/B rounds (${p.rounds} rounds, ${Math.round(p.level * 1000) / 10}% level)`;
  const header = `## ${escapeMarkdown(title)}: ${verdict}${note ? `\n\n${note}` : ''}`;
  return fitBodies(
    [
      { id: 'header', text: header },
      { id: 'paired', text: renderPairedSection(ab) },
    ],
    marker,
  );
}

/**
 * Outputs, warnings and failure for a paired verdict: `verdict` is the paired one, `run-verdict`
 * `failed` when any round failed its own thresholds; `regressed` fails the step with
 * `fail-on-regression`; `inconclusive` never fails it and says why as a warning.
 */
export function abOutcome(
  mode: ResolvedMode,
  inputs: Pick<ReportActionInputs, 'failOnRegression'>,
  ab: AbResult,
): ReportOutcome {
  const p = ab.paired;
  const outcome: ReportOutcome = {
    outputs: {
      ...emptyOutputs(mode),
      verdict: p.verdict,
      'run-verdict': ab.rounds.every((r) => r.verdict === 'passed') ? 'passed' : 'failed',
    },
    annotations: [],
    warnings: p.verdict === 'inconclusive' ? [`A/B rounds inconclusive: ${p.reason}`] : [],
  };
  if (p.verdict === 'regressed' && inputs.failOnRegression)
    outcome.failure = `performance regressed on paired A/B rounds: ${p.reason}`;
  return outcome;
}

/**
 * Modes `comment` and `bundle` for an A/B result: judged with this step's gate and tolerances,
 * written to the job summary, then the sticky comment or the bundle (which carries the A/B
 * result, for post-bundle to judge again).
 * @throws ConfigurationError in mode `store`, or outside a pull request.
 */
export async function reportAb(
  inputs: ReportActionInputs,
  deps: ReportDeps,
  mode: ResolvedMode,
  given: AbResult,
): Promise<ReportOutcome> {
  if (mode !== 'comment' && mode !== 'bundle')
    throw new ConfigurationError(
      `result: ${inputs.resultPath} is an A/B result, for a pull request's comment (modes comment and bundle); mode ${mode} stores or posts single runs`,
    );
  const pr = pullRequestOf(deps.ctx);
  if (!pr)
    throw new ConfigurationError(`mode: ${mode} needs a pull_request event, not ${deps.ctx.eventName}`);
  const ab = rejudgeAb(given, {
    level: given.paired.level,
    tolerances: inputs.tolerances,
    gate: inputs.gate,
  });
  const marker = commentMarker({ workflow: deps.ctx.workflow, job: deps.ctx.job, key: inputs.key });
  const rendered = renderAbBodies(ab, marker, inputs.title ?? defaultTitle(inputs.key));
  await deps.writeSummary(rendered.summary.text);
  const outcome = abOutcome(mode, inputs, ab);
  await deliverReport(mode, inputs, deps, pr, rendered.comment.text, outcome, {
    verdict: ab.paired.verdict,
    ab,
  });
  return outcome;
}
