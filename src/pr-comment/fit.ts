/**
 * Fitting a report into GitHub's size limits (docs.github.com, REST "Create an issue comment": body
 * at most 65,536 characters; job summary at most 1 MiB per step, "Adding a job summary"): sections
 * are dropped, then shortened, then the text is cut. Characters are counted as UTF-16 code units
 * here, which is never fewer than GitHub's count.
 */

/** GitHub's limit on a comment body, in characters. */
export const COMMENT_LIMIT = 65_536;
/** GitHub's limit on one step's job summary, in bytes. */
export const SUMMARY_LIMIT_BYTES = 1024 * 1024;

/** A piece of the body. Sections with `drop` go first when the body is too long, lowest first. */
export interface Section {
  id: string;
  text: string;
  /** Drop order (1 first); absent = kept. */
  drop?: number;
  /** A shorter rendering that fits in `budget` characters (measured by the fitting's measure). */
  shrink?: (budget: number, measure: (s: string) => number) => string;
}

/** Characters as GitHub counts a comment body (UTF-16 code units: never fewer than GitHub's count). */
export const measureChars = (s: string): number => s.length;
/** Bytes of UTF-8, as the job summary limit counts. */
export const measureBytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The fitted body and what was left out. */
export interface Fitted {
  text: string;
  /** Ids of sections dropped or shortened, in that order. */
  dropped: string[];
}

/**
 * Joins sections into a body of at most `limit` (by `measure`): when too long, drops `<details>`
 * sections by their `drop` order, then shortens sections that can shrink (the thresholds table:
 * failed rows first), and as a last resort cuts the text. A note says what was left out.
 * @param where where the full report is, for the note (e.g. `the job summary`).
 */
export function fitSections(
  sections: Section[],
  limit: number,
  measure: (s: string) => number,
  where: string,
): Fitted {
  const join = (parts: string[]) => `${parts.join('\n\n')}\n`;
  const render = (secs: Section[], dropped: string[]) => {
    const texts = secs.map((s) => s.text);
    if (dropped.length > 0) {
      const note = `<sub>Left out to fit GitHub's size limit: ${dropped.join(', ')}. ${where}</sub>`;
      texts.splice(texts.length - 1, 0, note);
    }
    return join(texts);
  };
  let current = [...sections];
  const dropped: string[] = [];
  let text = render(current, dropped);
  if (measure(text) <= limit) return { text, dropped };
  for (const victim of sections.filter((s) => s.drop !== undefined).sort((a, b) => a.drop! - b.drop!)) {
    current = current.filter((s) => s !== victim);
    dropped.push(victim.id);
    text = render(current, dropped);
    if (measure(text) <= limit) return { text, dropped };
  }
  // Shrink every section that can, each to an even share of what the others leave (several
  // scripts' thresholds tables shrink alike), counting those not shrunk yet as empty.
  const shrinkable = current.filter((s) => s.shrink);
  if (shrinkable.length > 0) {
    const notes = shrinkable.map((s) => `part of ${s.id}`);
    dropped.push(...notes);
    const pending = new Set(shrinkable);
    for (const [i, section] of current.entries()) {
      if (!section.shrink) continue;
      pending.delete(section);
      const others = measure(
        render(
          current.filter((s) => s !== section && !pending.has(s)),
          dropped,
        ),
      );
      const share = Math.floor(Math.max(0, limit - others - 2 * (pending.size + 1)) / (pending.size + 1));
      const shrunk = { ...section, text: section.shrink(share, measure) };
      current = current.map((s, j) => (j === i ? shrunk : s));
    }
    // A section that kept its whole text within its share is not named as shortened.
    for (const [k, s] of shrinkable.entries())
      if (current.find((c) => c.id === s.id)?.text === s.text) dropped.splice(dropped.indexOf(notes[k]!), 1);
    text = render(current, dropped);
    if (measure(text) <= limit) return { text, dropped };
  }
  // Last resort (a huge title or script path): cut, keeping the marker at the top.
  const tail = '\n\n_(cut to fit)_\n';
  let cut = text.slice(0, Math.max(0, limit - tail.length));
  while (measure(cut + tail) > limit) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return { text: cut + tail, dropped: [...dropped, 'the rest'] };
}
