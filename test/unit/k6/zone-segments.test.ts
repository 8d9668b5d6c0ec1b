import { describe, expect, it } from 'vitest';
import { zoneSegments } from '../../../src/k6/zone-segments.ts';

/** A segment boundary (`0`, `1`, `a/b`) as a number. */
const value = (b: string) => {
  const [n, d] = b.split('/').map(Number);
  return d === undefined ? n! : n! / d;
};
const width = (segment: string) => {
  const [from, to] = segment.split(':');
  return value(to!) - value(from!);
};

describe('zone segments (k6 --execution-segment by share)', () => {
  it('gives 70/30 with 3+2 runners 70% over 3 runners, then 30% over 2', () => {
    const { segments, sequence } = zoneSegments([
      { share: 70, runners: 3 },
      { share: 30, runners: 2 },
    ]);
    expect(segments).toEqual([
      ['0:7/30', '7/30:7/15', '7/15:7/10'],
      ['7/10:17/20', '17/20:1'],
    ]);
    expect(sequence).toBe('0,7/30,7/15,7/10,17/20,1');
    expect(segments[0]!.reduce((a, s) => a + width(s), 0)).toBeCloseTo(0.7, 12);
    expect(segments[1]!.reduce((a, s) => a + width(s), 0)).toBeCloseTo(0.3, 12);
  });

  it('is the plain split for one zone of 100%', () => {
    expect(zoneSegments([{ share: 100, runners: 4 }])).toEqual({
      segments: [['0:1/4', '1/4:1/2', '1/2:3/4', '3/4:1']],
      sequence: '0,1/4,1/2,3/4,1',
    });
  });

  it('chains the segments from 0 to 1 with the sequence, decimal shares included', () => {
    const { segments, sequence } = zoneSegments([
      { share: 33.3, runners: 2 },
      { share: 33.4, runners: 1 },
      { share: 33.3, runners: 5 },
    ]);
    const all = segments.flat();
    const bounds = sequence.split(',');
    expect(all).toEqual(bounds.slice(0, -1).map((from, i) => `${from}:${bounds[i + 1]}`));
    expect(bounds.at(-1)).toBe('1');
    expect(width(segments[1]![0]!)).toBeCloseTo(0.334, 12);
  });

  it.each([
    [
      [
        { share: 70, runners: 1 },
        { share: 20, runners: 1 },
      ],
      /add up to 90, not 100/,
    ],
    [
      [
        { share: 0, runners: 1 },
        { share: 100, runners: 1 },
      ],
      /more than 0/,
    ],
    [[{ share: 100, runners: 0 }], /whole number of at least 1/],
  ])('refuses %j', (zones, error) => {
    expect(() => zoneSegments(zones)).toThrow(error);
  });
});
