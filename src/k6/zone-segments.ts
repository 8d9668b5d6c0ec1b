/**
 * Execution segments for load zones: zone z gets the share s_z (percent) of the whole test, as the
 * contiguous slice [S_z, S_z + s_z/100) of (0, 1] where S_z is the sum of the shares before it, and
 * splits that slice evenly over its n_z runners. Every runner gets the same sequence, the union of
 * every boundary, so that k6 spreads VUs and iterations over the segments as one instance running
 * the whole test would (k6 `--execution-segment-sequence`, grafana/k6 `lib/execution_segment.go`
 * `ExecutionSegmentSequence`): the runners' parts add up to the whole test, and zone z's runners
 * together run the share of every scenario that k6 gives the segment [S_z, S_z + s_z/100)
 * (rounded as k6 rounds a segment's VUs and iterations, so a zone's share of a scenario of 3 VUs
 * is whole VUs, not 70% of 3).
 */

/** A rational number `num/den`, den > 0, reduced. */
interface Fraction {
  num: bigint;
  den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function fraction(num: bigint, den: bigint): Fraction {
  const g = gcd(num, den) || 1n;
  return { num: num / g, den: den / g };
}

/** As k6 reads a segment boundary: `0`, `1` or `a/b`. */
function text(f: Fraction): string {
  if (f.num === 0n) return '0';
  if (f.num === f.den) return '1';
  return `${f.num}/${f.den}`;
}

/** One zone's part of the test. */
export interface ZoneShare {
  /** Percent of the whole test, more than 0; the zones' shares add up to 100. */
  share: number;
  /** Runners of the zone, a whole number of at least 1. */
  runners: number;
}

/**
 * The execution segments of every zone's runners and the sequence they all share.
 * Shares may have decimals (`33.3`); they are taken to 1/1,000,000 of a percent.
 * @returns per zone, its runners' segments (`a/b:c/d`) in order; and the sequence (`0,…,1`).
 * @throws Error when a share is not more than 0, a runner count is not a whole number of at least 1,
 *   or the shares do not add up to 100 (the inputs check this first, naming the zone).
 */
export function zoneSegments(zones: readonly ZoneShare[]): { segments: string[][]; sequence: string } {
  const scale = 100_000_000n; // percent × 10^6
  const parts = zones.map((z) => {
    if (!(z.share > 0)) throw new Error(`a zone's share must be more than 0, got ${z.share}`);
    if (!Number.isInteger(z.runners) || z.runners < 1)
      throw new Error(`a zone's runners must be a whole number of at least 1, got ${z.runners}`);
    return BigInt(Math.round(z.share * 1_000_000));
  });
  const total = parts.reduce((a, b) => a + b, 0n);
  if (total !== scale) throw new Error(`the zones' shares add up to ${Number(total) / 1_000_000}, not 100`);
  const segments: string[][] = [];
  const boundaries: string[] = ['0'];
  let start = 0n;
  zones.forEach((zone, z) => {
    const n = BigInt(zone.runners);
    const share = parts[z]!;
    const at = (i: bigint) => fraction(start * n + share * i, scale * n);
    const own: string[] = [];
    for (let i = 0n; i < n; i++) {
      own.push(`${text(at(i))}:${text(at(i + 1n))}`);
      boundaries.push(text(at(i + 1n)));
    }
    segments.push(own);
    start += share;
  });
  return { segments, sequence: boundaries.join(',') };
}
