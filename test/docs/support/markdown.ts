/** Just enough Markdown for the docs tests: headings, tables, fenced code blocks, links. */

/** A heading and the text under it, up to the next heading of the same or a higher level. */
export interface Section {
  level: number;
  title: string;
  body: string;
}

function levelOf(line: string): number | undefined {
  return /^(#{1,6}) /.exec(line)?.[1]?.length;
}

/** Every heading's section (nested sections are inside their parent's body too). */
export function sections(md: string): Section[] {
  const lines = withoutCode(md).split('\n');
  const raw = md.split('\n');
  const out: Section[] = [];
  lines.forEach((line, i) => {
    const h = /^(#{1,6}) (.+)$/.exec(line);
    if (!h) return;
    const level = h[1]!.length;
    let end = i + 1;
    while (end < lines.length && (levelOf(lines[end]!) ?? 7) > level) end++;
    out.push({ level, title: h[2]!.trim(), body: raw.slice(i + 1, end).join('\n') });
  });
  return out;
}

/** The one section with this title (exactly, or starting with it). */
export function section(md: string, title: string, level?: number): Section {
  const found = sections(md).filter(
    (s) => (s.title === title || s.title.startsWith(title)) && (level === undefined || s.level === level),
  );
  if (found.length !== 1) throw new Error(`expected one section "${title}", found ${found.length}`);
  return found[0]!;
}

/** The Markdown with fenced code blocks blanked (so `# comment` in a block is not a heading). */
function withoutCode(md: string): string {
  let inside = false;
  return md
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        inside = !inside;
        return '';
      }
      return inside ? '' : line;
    })
    .join('\n');
}

/** The rows of every table in the text (header row first, the `---` row left out), cells trimmed. */
export function tables(text: string): string[][][] {
  const out: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of withoutCode(text).split('\n')) {
    if (/^\s*\|/.test(line)) {
      const cells = line
        .trim()
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((c) => c.trim());
      if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
      if (!current) {
        current = [];
        out.push(current);
      }
      current.push(cells);
    } else current = undefined;
  }
  return out;
}

/** The names in backticks in a cell (`` `baseline-sha`, `baseline-run-id` `` -> both). */
export function codeNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

/** Fenced code blocks with their language. */
export function codeBlocks(md: string): Array<{ lang: string; code: string; line: number }> {
  const out: Array<{ lang: string; code: string; line: number }> = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\w*)/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    out.push({ lang: open[1]!, code: body.join('\n'), line: start + 1 });
  }
  return out;
}

/** Relative link targets (`docs/x.md`, `#anchor`, `../README.md#y`), outside code. */
export function relativeLinks(md: string): string[] {
  return [...withoutCode(md).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z]+:/i.test(t));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
