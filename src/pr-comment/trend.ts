import { metricHistory } from '../compare/history.ts';
import type { MetricId } from '../compare/judgement.ts';
import { MIN_HISTORY_FOR_NOISE } from '../compare/significance.ts';
import type { CommentData, Judgement } from '../compare/verdict.ts';
import { type Trend, trendMarkdown } from '../render/chart.ts';
import { formatChange, formatDelta, formatDeltaValue } from '../render/delta.ts';
import { inlineCode } from '../render/format.ts';

/**
 * The pull request report's trend section: the gated metrics across the base branch's history,
 * this PR last. Pure: it shows what src/compare/ decided.
 */

/** A collapsible block of Markdown. */
export function details(summary: string, body: string, open = false): string {
  return `<details${open ? ' open' : ''}><summary>${summary}</summary>\n\n${body}\n\n</details>`;
}

/** What the trend calls this PR's point. */
const HEAD_LABEL = 'this PR';

const pctText = (x: number) => `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(x).toFixed(1)}%`;

/**
 * The trend of the gated metrics across the history runs (oldest first), this PR's value last,
 * with the history's normal range where it had enough runs to give the between-run noise; ''
 * without a history. Each metric's line says this PR against the history's median, for
 * information, and that the verdict judged the change against the baseline run.
 */
export function trendSection(input: CommentData, j: Judgement): string {
  const runs = j.history;
  const looked = input.history;
  if (!runs || !looked || !j.comparison) return '';
  const branch = input.baseline.branch ? ` of ${inlineCode(input.baseline.branch)}` : '';
  const notes = [
    looked.skipped > 0
      ? `${looked.skipped} run${looked.skipped === 1 ? '' : 's'} skipped: result artifact missing or expired.`
      : '',
    looked.fromBranch
      ? `${looked.fromBranch.runs} run${looked.fromBranch.runs === 1 ? '' : 's'} read from the history branch ${inlineCode(looked.fromBranch.branch)}.`
      : '',
    j.historyExcluded
      ? `${j.historyExcluded} run${j.historyExcluded === 1 ? '' : 's'} left out: another environment (runners, image, script…).`
      : '',
  ].filter(Boolean);
  const note = notes.length > 0 ? `\n\n_${notes.join(' ')}_` : '';
  const method =
    runs.length >= MIN_HISTORY_FOR_NOISE
      ? "The verdict judges each change against the baseline run (the table above); these runs give its between-run noise (1.4826 × MAD of their values, less their own in-run part). The percentages here are against the history's median, for information."
      : `With ${runs.length} comparable run${runs.length === 1 ? '' : 's'} (${MIN_HISTORY_FOR_NOISE} needed to measure the between-run noise) the verdict uses the default between-run noise. The percentages here are against the history's median, for information.`;
  const summary = `Trend of the gated metrics over the last ${runs.length} successful run${runs.length === 1 ? '' : 's'}${branch}`;
  if (runs.length === 0) return details(summary, `${method}${note}`, true);
  const values = new Map(
    metricHistory(
      j.comparison,
      runs.map((r) => r.result),
    ).map((h) => [h.id, h.values]),
  );
  const parts: string[] = [];
  for (const d of j.comparison.keyMetrics) {
    if (!d.gated || d.head === undefined) continue;
    const past = values.get(d.id as MetricId) ?? [];
    const history = runs.flatMap((r, i) =>
      past[i] === undefined ? [] : [{ label: r.run.sha.slice(0, 7), value: past[i]! }],
    );
    const h = d.judgement?.noise.history;
    const trend: Trend = {
      metric: d.label,
      unit: d.unit,
      history,
      head: { label: HEAD_LABEL, value: d.head },
      ...(h ? { range: { low: Math.max(0, h.median - 3 * h.sd), high: h.median + 3 * h.sd } } : {}),
    };
    const known = history.map((x) => x.value).sort((x, y) => x - y);
    const mid = known.length > 0 ? (h?.median ?? known[Math.floor((known.length - 1) / 2)]!) : undefined;
    const vsMedian =
      mid !== undefined && mid !== 0
        ? ` ${pctText(((d.head - mid) / Math.abs(mid)) * 100)} against the history's median ${formatDeltaValue(d, mid)}`
        : '';
    const vsBase = d.judgement
      ? `; against the baseline run ${formatDelta(d)}: ${formatChange(d, j.judged)}`
      : '';
    parts.push(`**${d.label}**${vsMedian}${vsBase}\n\n${trendMarkdown(trend)}`);
  }
  return details(summary, [method, ...parts].join('\n\n') + note, true);
}
