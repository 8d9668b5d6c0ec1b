import type { GroupResult, MetricResult } from '../result/schema.ts';

/**
 * Formatting of numbers and of user-controlled text for markdown reports (job summary, PR comment,
 * terminal). Metric, tag, check, group and scenario names come from the user's script: they are
 * escaped so they cannot break a table or inject HTML.
 */

/**
 * Bidirectional controls: the embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069
 * and the marks U+200E/U+200F. They make text read otherwise than it is stored (U+202E reverses
 * what follows), so user text never carries them into a report.
 */
export const BIDI_CONTROLS = /[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** Each bidirectional control ({@link BIDI_CONTROLS}) as its visible code point, `[U+202E]`. */
export function showBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, (c) => `[U+${c.codePointAt(0)!.toString(16).toUpperCase()}]`);
}

/**
 * User text that GitHub shows as written: a zero-width space goes where GitHub would make a link
 * or a notification of it (after the scheme of `http://`, `https://` and `ftp://` and after a
 * leading `www`: GFM's extended autolinks; after every `@`: mentions and e-mail addresses; after a
 * `#` or `GH-` before a digit: issue references), and bidirectional controls are shown
 * ({@link showBidiControls}). The text reads the same; nothing in it is a link.
 */
export function inertText(text: string): string {
  return showBidiControls(text)
    .replace(/\b(https?|ftp)(?=:\/\/)/gi, '$1\u200b')
    .replace(/\b(www)(?=\.)/gi, '$1\u200b')
    .replace(/@/g, '@\u200b')
    .replace(/#(?=\d)/g, '#\u200b')
    .replace(/\b(GH-)(?=\d)/gi, '$1\u200b');
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Replaces HTML-significant characters with their entities: `& < > " '` by default, or those that
 * `chars` (a global regular expression over them) matches.
 */
export function htmlEntities(text: string, chars: RegExp = /[&<>"']/g): string {
  return text.replace(chars, (c) => ENTITIES[c] ?? c);
}

/**
 * Escapes text for one markdown table cell or inline span: no link, mention, reference or
 * bidirectional control ({@link inertText}); HTML-significant characters become entities, markdown
 * punctuation is backslash-escaped, line breaks become spaces.
 */
export function escapeMarkdown(text: string): string {
  return htmlEntities(inertText(text), /[&<>"]/g)
    .replace(/[\r\n]+/g, ' ')
    .replace(/([\\`*_[\]{}()#+!|~-])/g, '\\$1');
}

/**
 * Text as inline code, safe in a table cell: backticks and pipes cannot end the span or the cell,
 * and bidirectional controls are shown ({@link showBidiControls}). GitHub makes no link or mention
 * inside code, so the text is otherwise as written (it can be copied).
 */
export function inlineCode(text: string): string {
  const clean = showBidiControls(text)
    .replace(/[\r\n]+/g, ' ')
    .replace(/\|/g, '¦')
    .replace(/`/g, "'");
  return `\`${clean}\``;
}

/** A duration in ms as k6 prints it: `850µs`, `12.34ms`, `1.25s`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return '0ms';
  if (Math.abs(ms) < 1) return `${(ms * 1000).toFixed(0)}µs`;
  if (Math.abs(ms) < 1000) return `${ms.toFixed(2)}ms`;
  return `${(ms / 1000).toFixed(2)}s`;
}

// One formatter each, made once: `toLocaleString` with options builds a new Intl.NumberFormat on
// every call (about 30 µs; a 1,000-runner report formats thousands of figures).
const COUNT_FORMAT = new Intl.NumberFormat('en-US');
const RATE_FORMAT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 });

/** A whole count with thousands separators: `12,345`. */
export function formatCount(n: number): string {
  return COUNT_FORMAT.format(Math.round(n));
}

/** A per-second rate: `1,234.5/s`. */
export function formatRate(perSecond: number): string {
  return `${RATE_FORMAT.format(perSecond)}/s`;
}

/** A fraction as a percentage: 0.0123 -> `1.23%`. */
export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(2)}%`;
}

/** Bytes in decimal units as k6 prints them: `1.2 MB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}

/** A plain number with up to 4 significant decimals. */
export function formatNumber(n: number): string {
  return Number.isInteger(n) ? formatCount(n) : n.toLocaleString('en-US', { maximumFractionDigits: 4 });
}

/**
 * A metric's value in its unit: ms for time trends, bytes for data, % for rates, plain otherwise.
 * @param key the value key (`p(95)`, `rate`, `count`, …).
 */
export function formatValue(
  metric: Pick<MetricResult, 'type' | 'contains'> | undefined,
  key: string,
  value: number,
): string {
  if (!metric) return formatNumber(value);
  if (metric.type === 'rate' && key === 'rate') return formatPercent(value);
  if (metric.type === 'counter' && key === 'rate') {
    return metric.contains === 'data' ? `${formatBytes(value)}/s` : formatRate(value);
  }
  if (metric.contains === 'time' && key !== 'count') return formatMs(value);
  if (metric.contains === 'data') return formatBytes(value);
  return formatNumber(value);
}

/** One check of {@link everyCheck}: its place as `group › check` and its totals across the runners. */
export interface CheckLine {
  /** The check's path without the leading `::`, groups joined by ` › ` (user text, not escaped). */
  path: string;
  passes: number;
  fails: number;
}

/** Every check of a group and of its nested groups, depth first, as the reports list them. */
export function everyCheck(group: GroupResult, out: CheckLine[] = []): CheckLine[] {
  for (const c of group.checks)
    out.push({ path: c.path.replace(/^::/, '').replaceAll('::', ' › '), passes: c.passes, fails: c.fails });
  for (const g of group.groups) everyCheck(g, out);
  return out;
}
