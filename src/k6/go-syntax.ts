/**
 * Values written in Go's syntax, parsed as k6 (a Go program) parses them: floats as Go's
 * `strconv.ParseFloat` reads them (threshold values and percentiles) and durations as
 * `k6 inspect` prints them (Go `time.Duration.String`).
 */

/**
 * Whether the underscores in a number are where Go allows them: only between digits, or between a
 * base prefix and a digit (Go `strconv.underscoreOK`).
 */
function underscoresOk(text: string): boolean {
  let body = text.replace(/^[+-]/, '');
  let saw = '^';
  let hex = false;
  if (/^0[xXoObB]/.test(body)) {
    hex = /^0[xX]/.test(body);
    body = body.slice(2);
    saw = '0';
  }
  for (const ch of body) {
    if (/[0-9]/.test(ch) || (hex && /[a-fA-F]/.test(ch))) saw = '0';
    else if (ch === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

const DECIMAL = /^[+-]?(?=[.\d_]*\d)[\d_]*\.?[\d_]*(?:[eE][+-]?[\d_]*\d[\d_]*)?$/;
const HEX =
  /^([+-]?)0[xX](?=[.\da-fA-F_]*[\da-fA-F])([\da-fA-F_]*)\.?([\da-fA-F_]*)[pP]([+-]?[\d_]*\d[\d_]*)$/;

/**
 * Parses a number as Go's `strconv.ParseFloat(s, 64)` does, which is what k6 uses for threshold
 * values and percentiles (`metrics/thresholds_parser.go`): decimal and hexadecimal floats (`0x1p3`,
 * the `p` exponent required), `_` between digits (`1_000`), `inf`/`infinity` with an optional sign
 * and `nan` (without one), in any case. A finite-looking number too large for a float64 is refused
 * (Go returns a range error).
 * @returns the number, or undefined when Go would refuse the text.
 */
export function parseGoFloat(text: string): number | undefined {
  if (/^[+-]?(?:inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (text.includes('_') && !underscoresOk(text)) return undefined;
  const clean = text.replaceAll('_', '');
  let value: number;
  const hex = HEX.exec(clean);
  if (hex) {
    const [, sign, whole, fraction, exponent] = hex as unknown as [string, string, string, string, string];
    const mantissa =
      Number.parseInt(whole || '0', 16) +
      [...fraction].reduce((acc, digit, i) => acc + Number.parseInt(digit, 16) / 16 ** (i + 1), 0);
    value = (sign === '-' ? -1 : 1) * mantissa * 2 ** Number(exponent);
  } else if (DECIMAL.test(clean)) {
    value = Number(clean);
  } else return undefined;
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Parses a Go duration as k6 prints it (`10m30s`, `1h2m3.5s`, `250ms`) into seconds.
 * @returns the duration in s (`250ms` is 0.25).
 * @throws Error for anything else.
 */
export function parseGoDuration(text: string): number {
  if (text === '0' || text === '0s') return 0;
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed !== text.length || consumed === 0) throw new Error(`not a duration: "${text}"`);
  return total;
}
