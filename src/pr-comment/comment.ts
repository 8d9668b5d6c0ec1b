import { type CommentData, type Judgement, judge } from '../compare/verdict.ts';
import { showBidiControls } from '../render/format.ts';
import {
  COMMENT_LIMIT,
  type Fitted,
  fitSections,
  measureBytes,
  measureChars,
  type Section,
  SUMMARY_LIMIT_BYTES,
} from './fit.ts';
import { renderSections } from './sections.ts';

/**
 * The pull request report as GitHub gets it: judged (src/compare/verdict.ts), rendered as sections
 * (sections.ts), made inert where the text comes from the user, and fitted into GitHub's size
 * limits (fit.ts), once for the PR comment and once for the job summary; and the hidden marker
 * that finds the comment again. Pure functions: no GitHub calls.
 */

/** The hidden marker's identity: one sticky comment per workflow, job and user key. */
export interface MarkerKey {
  workflow: string;
  job: string;
  key: string;
}

/**
 * The hidden HTML comment that identifies this action's comment for one workflow, job and key.
 * Values are percent-encoded, so no `-->` can end the marker early.
 */
export function commentMarker(k: MarkerKey): string {
  const enc = encodeURIComponent;
  return `<!-- k6-distributed:report workflow=${enc(k.workflow)} job=${enc(k.job)} key=${enc(k.key)} -->`;
}

/** The comment body (fits {@link COMMENT_LIMIT}) and the job summary (fits {@link SUMMARY_LIMIT_BYTES}). */
export interface RenderedReport {
  judgement: Judgement;
  comment: Fitted;
  summary: Fitted;
}

/**
 * Makes user-derived text inert in a comment body: every `<!--` gets a zero-width space after its
 * `<` (it shows the same, but opens no HTML comment, so no threshold, tag or log line can carry
 * another comment's marker), and bidirectional controls (U+202E and its kin) are shown as their
 * code points (src/render/format.ts; the user text in the sections was made inert there already).
 */
export function defuseComment(text: string): string {
  return showBidiControls(text.replaceAll('<!--', '<\u200b!--'));
}

/** {@link defuseComment} over a section, its shorter rendering included. */
export function defuseSection(section: Section): Section {
  const { shrink } = section;
  return {
    ...section,
    text: defuseComment(section.text),
    ...(shrink ? { shrink: (budget, measure) => defuseComment(shrink(budget, measure)) } : {}),
  };
}

/**
 * The comment body (fits {@link COMMENT_LIMIT}, in characters) and the job summary (fits
 * {@link SUMMARY_LIMIT_BYTES}, in bytes) from a report's sections. The marker is the body's first
 * line and the only HTML comment in it: every section is passed through {@link defuseSection}.
 * @param sections at least one; the first is the header the marker goes on.
 * @param marker the hidden marker ('' for none).
 */
export function fitBodies(sections: Section[], marker: string): { comment: Fitted; summary: Fitted } {
  const defused = sections.map(defuseSection);
  if (marker) defused[0] = { ...defused[0]!, text: `${marker}\n${defused[0]!.text}` };
  return {
    comment: fitSections(
      defused,
      COMMENT_LIMIT,
      measureChars,
      'The job summary of the run has the full report.',
    ),
    summary: fitSections(defused, SUMMARY_LIMIT_BYTES, measureBytes, 'The result JSON has everything.'),
  };
}

/** Judges and renders the report for the comment and the job summary ({@link fitBodies}). */
export function renderReportBodies(input: CommentData, marker: string): RenderedReport {
  const judgement = judge(input);
  return { judgement, ...fitBodies(renderSections(input, judgement, ''), marker) };
}
