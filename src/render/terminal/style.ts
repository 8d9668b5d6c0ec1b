import { showBidiControls } from '../format.ts';

/**
 * What the terminal report is drawn with: ANSI colours (SGR sequences, as k6's own end-of-test
 * summary uses them) only when asked, text from the user's script made inert, and padding that
 * counts what a terminal shows, not the escape bytes.
 */

/** Colours and weights the report uses, by name (k6's summary uses the same ones). */
const SGR = { bold: '1', faint: '2', red: '31', green: '32', yellow: '33', cyan: '36' } as const;

/** One of {@link SGR}. */
export type Tone = keyof typeof SGR;

/** Paints text, or leaves it plain when colour is off. */
export interface Painter {
  /** Whether {@link Painter.paint} adds escape sequences. */
  readonly color: boolean;
  paint(text: string, ...tones: Tone[]): string;
}

/** A {@link Painter}: `color` false gives plain text, with no ESC byte. */
export function painter(color: boolean): Painter {
  return {
    color,
    paint: (text, ...tones) =>
      color && tones.length > 0 && text !== ''
        ? `\x1b[${tones.map((t) => SGR[t]).join(';')}m${text}\x1b[0m`
        : text,
  };
}

/**
 * Whether the report is coloured: `NO_COLOR` set to anything but '' turns colour off
 * (https://no-color.org), even with `FORCE_COLOR`; else `FORCE_COLOR` set to anything but '', `0` or
 * `false` turns it on (for a pager or a CI log that shows colours); else colour only when the
 * output is a terminal.
 * @param isTTY `process.stdout.isTTY` (undefined on a pipe or a file).
 */
export function wantsColor(isTTY: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force.toLowerCase() !== 'false';
  return isTTY === true;
}

/** SGR sequences, as {@link painter} writes them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what it finds.
const ESCAPES = /\x1b\[[0-9;]*m/g;

/** The columns text takes in a terminal: code points, escape sequences not counted. */
export function visibleWidth(text: string): number {
  return [...text.replace(ESCAPES, '')].length;
}

/** Pads text (which may hold escape sequences) on the right to `width` visible columns. */
export function padRight(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleWidth(text)));
}

/** Pads text on the left to `width` visible columns (numbers line up on the right). */
export function padLeft(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - visibleWidth(text))) + text;
}

/**
 * Text from the user's script or from a runner (metric, check and group names, the script's path,
 * k6's messages) made inert for a terminal: line breaks become spaces, every other control
 * character (C0, DEL, C1: ESC would start an escape sequence that recolours, moves the cursor or
 * retitles the window) shows as `\xHH`, and bidirectional controls as `[U+202E]`.
 */
export function terminalText(text: string): string {
  return showBidiControls(text)
    .replace(/[\r\n]+/g, ' ')
    .replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces.
      /[\u0000-\u001f\u007f-\u009f]/g,
      (c) => `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
    );
}

/** The visible width of each column: its widest cell. */
export function columnWidths(rows: readonly (readonly string[])[]): number[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visibleWidth(cell));
    });
  }
  return widths;
}

/**
 * Lines of cells as an aligned table: each column as wide as its widest cell, two spaces between
 * columns, cells of `right` columns aligned on the right; trailing spaces trimmed.
 * @param rows the header row first; cells may hold escape sequences.
 */
export function alignTable(rows: readonly (readonly string[])[], right: readonly boolean[]): string[] {
  const widths = columnWidths(rows);
  return rows.map((row) =>
    row
      .map((cell, i) => (right[i] ? padLeft(cell, widths[i]!) : padRight(cell, widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
