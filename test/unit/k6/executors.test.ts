import { describe, expect, it } from 'vitest';
import {
  earliestEndS,
  executionSegmentSequence,
  executionSegments,
  shortArrivalRates,
} from '../../../src/k6/executors.ts';

/*
 * The executor and execution-segment decisions the product takes before the runners start
 * (src/k6/executors.ts): when a test can end by itself, which arrival-rate scenarios leave some
 * runner without a pre-allocated VU, and the segments each runner gets.
 */

describe('earliestEndS: the earliest a test can end by itself, per executor (k6 lib/executor)', () => {
  it.each([
    // [executor, the scenario's other options as k6 inspect prints them, earliest end in s]
    ['constant-vus', { vus: 2, duration: '30s' }, 30],
    [
      'ramping-vus',
      {
        stages: [
          { duration: '10s', target: 5 },
          { duration: '1m0s', target: 0 },
        ],
      },
      70,
    ],
    ['constant-arrival-rate', { rate: 5, duration: '1m30s', preAllocatedVUs: 2 }, 90],
    [
      'ramping-arrival-rate',
      { stages: [{ duration: '20s' }, { duration: '500ms' }], preAllocatedVUs: 1 },
      20.5,
    ],
    ['externally-controlled', { duration: '2m0s', maxVUs: 10 }, 120],
    // Iteration-based executors may end at any time; maxDuration is their bound, not their end.
    ['shared-iterations', { vus: 2, iterations: 10, maxDuration: '10m0s' }, 0],
    ['per-vu-iterations', { vus: 2, iterations: 10, maxDuration: '10m0s' }, 0],
    ['no-such-executor', { duration: '30s' }, 0],
  ])('%s %j ends at %d s at the earliest', (executor, options, expected) => {
    expect(earliestEndS({ s: { executor, startTime: null, ...options } })).toBeCloseTo(expected, 9);
  });

  it('adds startTime, prefers stages over duration, and takes the latest scenario', () => {
    expect(earliestEndS({ a: { executor: 'constant-vus', startTime: '1m0s', duration: '30s' } })).toBe(90);
    expect(
      earliestEndS({
        a: { executor: 'ramping-vus', duration: '5m0s', stages: [{ duration: '10s', target: 1 }] },
      }),
    ).toBe(10);
    expect(
      earliestEndS({
        a: { executor: 'constant-vus', duration: '1m0s' },
        b: { executor: 'constant-vus', startTime: '50s', duration: '20s' },
        c: { executor: 'shared-iterations', startTime: '10m0s', iterations: 1 },
      }),
    ).toBe(70);
  });

  it('counts no scenario for anything but an object of scenarios', () => {
    for (const scenarios of [undefined, null, 'constant-vus', 3]) expect(earliestEndS(scenarios)).toBe(0);
    expect(earliestEndS({})).toBe(0);
  });

  it('refuses a duration k6 would not print', () => {
    expect(() => earliestEndS({ a: { executor: 'constant-vus', duration: '30 seconds' } })).toThrowError(
      /not a duration/,
    );
  });
});

describe('shortArrivalRates: arrival-rate scenarios that leave a runner without a pre-allocated VU', () => {
  it.each([
    // [executor, preAllocatedVUs, runners, listed]
    ['constant-arrival-rate', 2, 4, true],
    ['constant-arrival-rate', 4, 4, false],
    ['constant-arrival-rate', 5, 4, false],
    ['ramping-arrival-rate', 3, 4, true],
    ['ramping-arrival-rate', 8, 4, false],
    ['constant-arrival-rate', undefined, 2, true],
    // VU-based executors get their VUs by segment too, but never allocate during the test.
    ['constant-vus', 1, 4, false],
    ['ramping-vus', 1, 4, false],
    ['shared-iterations', 1, 4, false],
    ['per-vu-iterations', 1, 4, false],
    ['externally-controlled', 1, 4, false],
  ])('%s with preAllocatedVUs %s on %d runners: listed %s', (executor, preAllocatedVUs, runners, listed) => {
    const scenarios = { s: { executor, ...(preAllocatedVUs === undefined ? {} : { preAllocatedVUs }) } };
    expect(shortArrivalRates(scenarios, runners)).toEqual(
      listed ? [{ name: 's', preAllocatedVUs: preAllocatedVUs ?? 0 }] : [],
    );
  });

  it('lists every short scenario in the order given, and none without scenarios', () => {
    const scenarios = {
      b: { executor: 'ramping-arrival-rate', preAllocatedVUs: 1 },
      a: { executor: 'constant-vus', vus: 1 },
      c: { executor: 'constant-arrival-rate', preAllocatedVUs: 2 },
    };
    expect(shortArrivalRates(scenarios, 3)).toEqual([
      { name: 'b', preAllocatedVUs: 1 },
      { name: 'c', preAllocatedVUs: 2 },
    ]);
    expect(shortArrivalRates(undefined, 3)).toEqual([]);
  });
});

describe('execution segments (k6 lib/execution_segment.go)', () => {
  it.each([
    [1, ['0:1'], '0,1'],
    [2, ['0:1/2', '1/2:1'], '0,1/2,1'],
    [3, ['0:1/3', '1/3:2/3', '2/3:1'], '0,1/3,2/3,1'],
    [4, ['0:1/4', '1/4:2/4', '2/4:3/4', '3/4:1'], '0,1/4,2/4,3/4,1'],
  ])('%d runners get %j out of the sequence %s', (n, segments, sequence) => {
    expect(executionSegments(n)).toEqual(segments);
    expect(executionSegmentSequence(n)).toBe(sequence);
  });

  it('gives runner i of N the segment that starts where runner i−1 ends, from 0 to 1', () => {
    for (const n of [5, 7, 16]) {
      const segments = executionSegments(n);
      const bounds = executionSegmentSequence(n).split(',');
      expect(segments).toEqual(bounds.slice(0, -1).map((from, i) => `${from}:${bounds[i + 1]}`));
    }
  });
});
