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

/**
 * The warning k6 logs when an arrival-rate scenario wants to start an iteration and has no free VU
 * left to give it, up to its `maxVUs` (k6 `lib/executor/constant_arrival_rate.go`,
 * `ramping_arrival_rate.go`: `Insufficient VUs, reached N active VUs and cannot initialize more`).
 */
const INSUFFICIENT_VUS = /Insufficient VUs, reached \d+ active VUs/g;

/** How many times k6's "Insufficient VUs" warning appears in a runner's log text. */
export function countInsufficientVUs(log: string): number {
  return log.match(INSUFFICIENT_VUS)?.length ?? 0;
}
