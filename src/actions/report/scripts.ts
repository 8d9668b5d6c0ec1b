import { ConfigurationError } from '../../errors.ts';
import { scriptKey } from '../../inputs/scripts.ts';
import { commentMarker } from '../../pr-comment/comment.ts';
import {
  renderScriptsReportBodies,
  type ScriptError,
  type ScriptReportData,
} from '../../pr-comment/scripts.ts';
import { defaultTitle } from '../../pr-comment/sections.ts';
import { inlineCode } from '../../render/format.ts';
import { writeJUnitReport } from '../common/junit.ts';
import type { ReportActionInputs } from './inputs.ts';
import {
  emptyOutputs,
  pullRequestOf,
  type ReportDeps,
  type ReportOutcome,
  scriptsOutcome,
  scriptsRunVerdict,
} from './outcome.ts';
import { commentData, deliverReport, droppedNote, writeComparedHtml } from './pull-request.ts';
import { resolveMode } from './report.ts';
import { store } from './store.ts';

/**
 * The report of several scripts run in one step (the root action with a list or a glob in
 * `script`). Each script is stored and compared under its own key, `<key>-<script>`
 * ({@link scriptKey}): its baseline is the base branch's stored result of that same script. The
 * pull request gets ONE sticky comment (the marker of `key`, as with one script) with a section per
 * script, and the job summary the same report (src/pr-comment/scripts.ts).
 *
 * - `store`: one baseline artifact per script, one job summary;
 * - `comment`: one comment; the step fails when any script's gated metric regressed;
 * - `bundle` (a fork's pull request): the same report in the job summary, and a report bundle
 *   with every script's data (`scripts`), which `post-bundle` renders again as the one comment;
 * - `post-bundle`: refused before the run (the root action runs no `workflow_run` report).
 */

/** One script of the step, as the run left it: a result file, or the reason it has none. */
export interface ScriptToReport {
  script: string;
  /** Its result JSON (absent file when `error` is set). */
  resultPath: string;
  /** Set when the script produced no result. */
  error?: string;
}

/**
 * Reports several scripts in one step.
 * @throws ConfigurationError for `post-bundle`, or `comment`/`bundle` outside a pull request.
 * @throws Error when a result cannot be read or a REST call fails beyond its retries.
 */
export async function reportScripts(
  inputs: ReportActionInputs,
  deps: ReportDeps,
  scripts: ScriptToReport[],
): Promise<ReportOutcome> {
  const mode = resolveMode(inputs.mode, deps.ctx);
  deps.log(
    `mode: ${mode}${inputs.mode === 'auto' ? ` (auto, event ${deps.ctx.eventName})` : ''}; ${scripts.length} scripts, each under its own key`,
  );
  const done = scripts.filter((s) => s.error === undefined);
  const errors: ScriptError[] = scripts.flatMap((s) =>
    s.error === undefined ? [] : [{ script: s.script, error: s.error }],
  );
  const own = (s: ScriptToReport): ReportActionInputs => ({
    ...inputs,
    key: scriptKey(inputs.key, s.script),
    resultPath: s.resultPath,
  });
  if (mode === 'post-bundle')
    throw new ConfigurationError('mode: post-bundle posts the report bundle of another run and runs no test');
  if (mode === 'store') return storeScripts(inputs, deps, done, errors, own);

  const pr = pullRequestOf(deps.ctx);
  if (!pr)
    throw new ConfigurationError(
      `mode: ${mode} needs a pull_request event, not ${deps.ctx.eventName} (use store on pushes)`,
    );
  const parts: ScriptReportData[] = [];
  for (const s of done) {
    deps.log(`${s.script}: the baseline of key ${scriptKey(inputs.key, s.script)}`);
    const input = await commentData(own(s), deps, pr);
    // The footer names the step's key; each script's baseline line names its own artifact.
    parts.push({ script: s.script, input: { ...input, options: { ...input.options, key: inputs.key } } });
  }
  const { ctx } = deps;
  const marker = commentMarker({ workflow: ctx.workflow, job: ctx.job, key: inputs.key });
  const rendered = renderScriptsReportBodies(parts, errors, marker, inputs.title ?? defaultTitle(inputs.key));
  await deps.writeSummary(rendered.summary.text);
  for (const [i, p] of parts.entries())
    await writeComparedHtml(done[i]!.resultPath, p.input, rendered.judgements[i]!, deps.log);
  deps.log(
    `report: ${rendered.verdict}; comment ${rendered.comment.text.length} characters${droppedNote(rendered.comment)}`,
  );

  const outcome = scriptsOutcome(mode, inputs, parts, rendered, errors);
  const junitRuns = [
    ...parts.map((p, i) => ({ script: p.script, result: p.input.head, compared: rendered.judgements[i]! })),
    ...errors,
  ];
  outcome.outputs['junit-path'] = await writeJUnitReport(inputs.junitPath, junitRuns, {
    info: deps.log,
    warning: deps.log,
  });
  await deliverReport(mode, inputs, deps, pr, rendered.comment.text, outcome, {
    verdict: rendered.verdict,
    input: parts[0]!.input,
    scripts: parts,
    errors,
  });
  return outcome;
}

/** `store` for several scripts: one baseline artifact per script, one job summary. */
async function storeScripts(
  inputs: ReportActionInputs,
  deps: ReportDeps,
  done: ScriptToReport[],
  errors: ScriptError[],
  own: (s: ScriptToReport) => ReportActionInputs,
): Promise<ReportOutcome> {
  const summaries: string[] = [];
  const ids: string[] = [];
  const verdicts: string[] = [];
  const warnings: string[] = [];
  for (const s of done) {
    const stored = await store(
      { ...own(s), title: `${inputs.title ?? defaultTitle(inputs.key)} · ${s.script}` },
      { ...deps, writeSummary: async (markdown) => void summaries.push(markdown) },
    );
    ids.push(stored.outputs['artifact-id']);
    verdicts.push(stored.outputs['run-verdict']);
    warnings.push(...stored.warnings);
  }
  const missing = errors.map(
    (e) => `## ${inlineCode(e.script)}\n\n❌ no result, nothing stored: ${e.error}\n`,
  );
  await deps.writeSummary(
    `# k6 distributed: ${done.length + errors.length} scripts\n\n${[...summaries, ...missing].join('\n')}`,
  );
  return {
    outputs: {
      ...emptyOutputs('store'),
      verdict: 'stored',
      'run-verdict': scriptsRunVerdict(verdicts, errors),
      'artifact-id': ids.join(','),
    },
    annotations: [],
    warnings,
  };
}
