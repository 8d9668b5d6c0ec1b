import { type CommentData, type Judgement, judge, type ReportVerdict } from '../compare/verdict.ts';
import { escapeMarkdown, inlineCode } from '../render/format.ts';
import { fitBodies } from './comment.ts';
import type { Fitted, Section } from './fit.ts';
import { renderSections, VERDICT_LINES } from './sections.ts';

/**
 * The pull request report of several scripts run in one step (issue #14 item 9): one body with a
 * table of every script's verdict at the top, then each script's own report (src/pr-comment/
 * comment.ts, compared with that script's own baseline) under its path, and one footer. The body
 * is fitted as one: the `<details>` of every script go before any key metric table does.
 */

/** One script's part: what its own report is made from (its result, its baseline). */
export interface ScriptReportData {
  script: string;
  input: CommentData;
}

/** A script of the step that produced no result, and why. */
export interface ScriptError {
  script: string;
  error: string;
}

/** The several-script report: each script's judgement in order, the overall verdict, the bodies. */
export interface RenderedScriptsReport {
  judgements: Judgement[];
  verdict: ReportVerdict;
  comment: Fitted;
  summary: Fitted;
}

/** Worst first: the overall verdict is the first of these that any script has. */
const VERDICT_ORDER: readonly ReportVerdict[] = [
  'regressed',
  'inconclusive',
  'environment-changed',
  'baseline-expired',
  'no-baseline',
  'passed',
];

/**
 * The verdict of several scripts: `regressed` when any script regressed, `passed` when every one
 * passed, else the worst of the others in the order regressed, inconclusive, environment-changed,
 * baseline-expired, no-baseline, passed.
 * @throws Error when `verdicts` is empty (there is no report without a result).
 */
export function overallVerdict(verdicts: readonly ReportVerdict[]): ReportVerdict {
  const worst = VERDICT_ORDER.find((v) => verdicts.includes(v));
  if (!worst) throw new Error('no script has a result to judge');
  return worst;
}

function headerSection(
  parts: ScriptReportData[],
  judgements: Judgement[],
  errors: ScriptError[],
  verdict: ReportVerdict,
  title: string,
  marker: string,
): Section {
  const total = parts.length + errors.length;
  const count = (v: ReportVerdict) => judgements.filter((j) => j.verdict === v).length;
  const line =
    verdict === 'regressed'
      ? `in ${count('regressed')} of ${total} scripts.`
      : verdict === 'passed'
        ? `in any of the ${parts.length} scripts with a result.`
        : 'for at least one script; each is judged against its own baseline below.';
  const rows = [
    ...parts.map(
      (p, i) =>
        `| ${inlineCode(p.script)} | ${VERDICT_LINES[judgements[i]!.verdict]} | ${p.input.head.verdict === 'passed' ? '✅ passed' : '❌ failed'} |`,
    ),
    ...errors.map((e) => `| ${inlineCode(e.script)} | — | ❌ no result: ${escapeMarkdown(e.error)} |`),
  ];
  return {
    id: 'header',
    text: [
      ...(marker ? [marker] : []),
      `## ${escapeMarkdown(title)} · ${total} scripts`,
      '',
      `**${VERDICT_LINES[verdict]}** ${line}`,
      '',
      '| Script | Against its baseline | This run (its own thresholds) |',
      '|---|---|---|',
      ...rows,
    ].join('\n'),
  };
}

/**
 * Judges every script against its own baseline and renders one report for the comment (fits
 * `COMMENT_LIMIT`) and the job summary (fits `SUMMARY_LIMIT_BYTES`), as {@link fitBodies}. Each script's
 * sections are those of its own report, headed by its path; their ids (in the note of what was
 * left out) start with the script.
 * @param parts the scripts with a result, in run order (at least one).
 * @param errors the scripts without a result, listed in the table.
 * @param marker the hidden marker, the body's first line and its only HTML comment.
 * @param title the heading (the `title` input, or the default title of the key).
 */
export function renderScriptsReportBodies(
  parts: ScriptReportData[],
  errors: ScriptError[],
  marker: string,
  title: string,
): RenderedScriptsReport {
  const judgements = parts.map((p) => judge(p.input));
  const verdict = overallVerdict(judgements.map((j) => j.verdict));
  const sections: Section[] = [headerSection(parts, judgements, errors, verdict, title, '')];
  let footer: Section | undefined;
  parts.forEach((p, i) => {
    for (const section of renderSections(
      { ...p.input, options: { ...p.input.options, title: p.script } },
      judgements[i]!,
      '',
    )) {
      if (section.id === 'footer') footer ??= section;
      else sections.push({ ...section, id: `${p.script} ${section.id}` });
    }
  });
  if (footer) sections.push(footer);
  return { judgements, verdict, ...fitBodies(sections, marker) };
}
