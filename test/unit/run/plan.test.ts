import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../../src/config.ts';
import { PINNED_K6_VERSION } from '../../../src/k6/binary.ts';
import { parseGoDuration, splitK6Args } from '../../../src/k6/preflight.ts';
import { executionSegmentSequence, executionSegments, planRun, runnerArgs } from '../../../src/run/plan.ts';

describe('run plan', () => {
  it('gives runner i of N the segment i/N:(i+1)/N and all of them the full sequence', () => {
    expect(executionSegments(1)).toEqual(['0:1']);
    expect(executionSegments(4)).toEqual(['0:1/4', '1/4:2/4', '2/4:3/4', '3/4:1']);
    expect(executionSegmentSequence(3)).toBe('0,1/3,2/3,1');
    const plan = planRun({
      runners: 3,
      maxVUs: 10,
      userRunArgs: ['--out', 'json=raw-{runner}.json'],
      tags: { team: 'a' },
    });
    const args = runnerArgs(plan, plan.runners[1]!, {
      archive: 'a.tar',
      summary: 's.json',
      address: '127.0.0.1:1',
    });
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(flag('--execution-segment')).toBe('1/3:2/3');
    expect(flag('--execution-segment-sequence')).toBe('0,1/3,2/3,1');
    expect(flag('--address')).toBe('127.0.0.1:1');
    expect(args).toContain('--paused');
    expect(args).toEqual(expect.arrayContaining(['--tag', 'team=a', '--tag', 'runner=1', 'json=raw-1.json']));
    expect(flag('--summary-trend-stats')).toMatch(/^count,min,max,avg,med,.*p\(95\),.*p\(99\.99\),/);
    expect(args.at(-1)).toBe('a.tar');
  });

  it('refuses fewer than 1 runner and more runners than VUs', () => {
    expect(() => planRun({ runners: 0, maxVUs: 10 })).toThrowError(
      /runners: must be a whole number of at least 1/,
    );
    expect(() => planRun({ runners: 11, maxVUs: 10 })).toThrowError(
      /11 runners for a test of at most 10 VUs/,
    );
  });
});

describe('preflight helpers', () => {
  it('routes run-only flags to k6 run, options to k6 archive, and -e to both', () => {
    expect(
      splitK6Args(['--vus', '10', '--out', 'json=x.json', '-e', 'A=b c', '--no-usage-report', '--env=B=1']),
    ).toEqual({
      archiveArgs: ['--vus', '10', '-e', 'A=b c', '--env=B=1'],
      runArgs: ['--out', 'json=x.json', '-e', 'A=b c', '--no-usage-report', '--env=B=1'],
    });
    expect(() => splitK6Args(['-e'])).toThrowError('k6 args: -e needs a value');
  });

  it.each([
    '--execution-segment',
    '--paused',
    '--address=0.0.0.0:1',
    '--summary-export',
    '--linger',
    '--no-thresholds',
  ])('refuses %s, which the product sets itself', (flag) => {
    expect(() => splitK6Args([flag, 'x'])).toThrowError(/k6 args: .* cannot be given/);
  });

  it('parses the durations k6 inspect prints', () => {
    expect(parseGoDuration('10m30s')).toBe(630);
    expect(parseGoDuration('1h2m3.5s')).toBe(3723.5);
    expect(parseGoDuration('250ms')).toBeCloseTo(0.25);
    expect(parseGoDuration('0s')).toBe(0);
    expect(() => parseGoDuration('ten')).toThrowError(/not a duration/);
  });
});

describe('run configuration', () => {
  it('maps blank inputs to defaults and keeps quoted k6 flags whole', () => {
    const config = parseRunConfig({
      script: 'a.js',
      runners: '',
      k6Args: `--tag "team=load test" -e 'X=a b'`,
    });
    expect(config.runners).toBe(1);
    expect(config.k6Args).toEqual(['--tag', 'team=load test', '-e', 'X=a b']);
    expect(config.resultPath).toBe('k6-distributed-result.json');
  });

  it('names the input and what is wrong', () => {
    expect(() => parseRunConfig({ script: 'a.js', runners: '0' })).toThrowError(
      'runners: must be at least 1',
    );
    expect(() => parseRunConfig({ script: 'a.js', runners: '2.5' })).toThrowError(
      'runners: must be a whole number',
    );
    expect(() => parseRunConfig({ script: '' })).toThrowError('script: is required');
    expect(() => parseRunConfig({ script: 'a.js', graceS: '-1' })).toThrowError(
      /graceS: must be more than 0/,
    );
  });
});

describe('pinned k6', () => {
  it('is the version tools/k6/go.mod builds', () => {
    const goMod = readFileSync(path.resolve(import.meta.dirname, '../../../tools/k6/go.mod'), 'utf8');
    expect(goMod).toContain(`require go.k6.io/k6/v2 ${PINNED_K6_VERSION}`);
  });
});
