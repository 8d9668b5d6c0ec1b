import { describe, expect, it } from 'vitest';
import { runnerThresholds, runsDefault, withoutAbortOnFail } from '../../../src/k6/entry.ts';
import { summaryProcessFlags } from '../../../src/k6/handle-summary.ts';

// The generated modules' inputs. The modules themselves run under real k6 in
// test/e2e/summary.test.ts and the equivalence suite.

describe('the runner entry module', () => {
  it("re-exports default only when a scenario runs it (k6 inspect's scenarios)", () => {
    expect(runsDefault(null)).toBe(true);
    expect(runsDefault({ a: { executor: 'shared-iterations', exec: null } })).toBe(true);
    expect(runsDefault({ a: { exec: 'api' }, b: { exec: 'default' } })).toBe(true);
    expect(runsDefault({ a: { exec: 'api' }, b: { exec: 'web' } })).toBe(false);
  });

  it('switches abortOnFail off and keeps the rest of each threshold', () => {
    expect(
      withoutAbortOnFail({
        http_req_failed: [{ threshold: 'rate<0.1', abortOnFail: true, delayAbortEval: '10s' }, 'rate<0.5'],
      }),
    ).toEqual({
      http_req_failed: [{ threshold: 'rate<0.1', abortOnFail: false, delayAbortEval: '10s' }, 'rate<0.5'],
    });
  });

  it("gives the runners the script's thresholds without abortOnFail, or a guard that cannot fail", () => {
    expect(runnerThresholds({})).toEqual({ iterations: ['count>=0'] });
    expect(runnerThresholds({ http_reqs: [{ threshold: 'count<10', abortOnFail: true }] })).toEqual({
      http_reqs: [{ threshold: 'count<10', abortOnFail: false }],
    });
  });
});

describe('the summary process', () => {
  it("gets the flags that shape how the script's code runs, and no others", () => {
    expect(
      summaryProcessFlags([
        '--vus',
        '10',
        '-e',
        'A=b',
        '--env=C=d',
        '--secret-source',
        'mock=k=v',
        '--compatibility-mode=base',
        '--include-system-env-vars',
        '--out',
        'json=x.json',
      ]),
    ).toEqual([
      '-e',
      'A=b',
      '--env=C=d',
      '--secret-source',
      'mock=k=v',
      '--compatibility-mode=base',
      '--include-system-env-vars',
    ]);
  });
});
