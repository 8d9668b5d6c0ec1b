/**
 * The most telling line of k6's log output (its logfmt lines, `time=… level=error msg="…"`):
 * the `msg` of the last `level=error` or `level=fatal` line, else the last non-empty line, with
 * escapes undone and white space folded to single spaces.
 */
export function k6ErrorLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const errors = lines.filter((l) => /level=(error|fatal)/.test(l));
  const line = errors.at(-1) ?? lines.at(-1) ?? '';
  const msg = /msg="((?:[^"\\]|\\.)*)"/.exec(line);
  return (msg ? msg[1]!.replace(/\\"/g, '"').replace(/\\n/g, ' ') : line).replace(/\s+/g, ' ').trim();
}
