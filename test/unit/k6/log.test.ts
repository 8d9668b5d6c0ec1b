import { describe, expect, it } from 'vitest';
import { countInsufficientVUs } from '../../../src/k6/log.ts';

describe("k6's log lines", () => {
  it('counts the "Insufficient VUs" warnings an arrival-rate executor logs at maxVUs', () => {
    const log = [
      'time="2026-11-25T10:00:01Z" level=info msg="starting"',
      'time="2026-11-25T10:00:02Z" level=warning msg="Insufficient VUs, reached 5 active VUs and cannot initialize more" executor=constant-arrival-rate scenario=a',
      'time="2026-11-25T10:00:02Z" level=warning msg="Insufficient VUs, reached 20 active VUs and cannot initialize more" executor=ramping-arrival-rate scenario=b',
    ].join('\n');
    expect(countInsufficientVUs(log)).toBe(2);
    expect(countInsufficientVUs('level=warning msg="slow"')).toBe(0);
  });
});
