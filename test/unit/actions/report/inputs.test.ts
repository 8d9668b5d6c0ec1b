import { describe, expect, it } from 'vitest';
import { INPUT_NAMES, parseReportInputs, readReportInputs } from '../../../../src/actions/report/inputs.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../../../src/compare/judgement.ts';
import { ConfigurationError } from '../../../../src/errors.ts';

describe('report action inputs', () => {
  it('applies the defaults to inputs that are not set ("" from core.getInput)', () => {
    const inputs = readReportInputs((name) => (name === 'github-token' ? 'ghs_x' : ''));
    expect(inputs).toEqual({
      mode: 'auto',
      resultPath: 'k6-distributed-result.json',
      token: 'ghs_x',
      key: 'default',
      gate: DEFAULT_GATE,
      tolerances: DEFAULT_TOLERANCES,
      scriptChange: 'gate',
      failOnRegression: true,
      failOnInconclusive: false,
      commentAuthor: 'github-actions[bot]',
      historyRuns: 10,
      historyBranchRead: 'fallback',
      historyMaxRuns: 500,
    });
  });

  it('reads every input of action.yml', () => {
    const seen: string[] = [];
    readReportInputs((name) => {
      seen.push(name);
      return name === 'github-token' ? 'x' : '';
    });
    expect(seen).toEqual([...INPUT_NAMES]);
  });

  it('names every invalid input in one line', () => {
    const error = (() => {
      try {
        parseReportInputs({
          'github-token': 'x',
          mode: 'post',
          key: 'a key',
          'fail-on-regression': 'yes',
          'retention-days': '400',
        });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe(
      'mode: "post" is not one of auto, store, comment, bundle, post-bundle; key: must be 1 to 64 letters, digits, ".", "_" or "-"; fail-on-regression: "yes" is not one of true, false; retention-days: must be 1 to 90 days',
    );
    expect(() => parseReportInputs({})).toThrow('github-token: is required');
    expect(() => parseReportInputs({ 'github-token': 'x', gate: 'p95 p97' })).toThrow(
      'gate: unknown metric "p97"',
    );
    expect(() => parseReportInputs({ 'github-token': 'x', tolerances: 'p95: fast' })).toThrow(
      'tolerances: "fast" for p95 must be a percentage (5%) or ms (e.g. 2ms)',
    );
    expect(() => parseReportInputs({ 'github-token': 'x', 'history-runs': '500' })).toThrow(
      'history-runs: must be 0 to 100 runs',
    );
    for (const branch of ['-x', 'a..b', 'a//b', 'a/', 'x.lock', 'a b', 'a~1'])
      expect(() => parseReportInputs({ 'github-token': 'x', 'history-branch': branch }), branch).toThrow(
        /^history-branch: must be a branch name/,
      );
    expect(parseReportInputs({ 'github-token': 'x', 'history-branch': 'perf/history-1' }).historyBranch).toBe(
      'perf/history-1',
    );
    expect(() => parseReportInputs({ 'github-token': 'x', 'history-max-runs': '0' })).toThrow(
      'history-max-runs: must be 1 to 100000 runs',
    );
    expect(() => parseReportInputs({ 'github-token': 'x', 'history-branch-read': 'never' })).toThrow(
      'history-branch-read: "never" is not one of fallback, always',
    );
    expect(() => parseReportInputs({ 'github-token': 'x', 'dashboard-url': 'grafana/d/k6' })).toThrow(
      'dashboard-url: "grafana/d/k6" is not a URL (e.g. https://grafana.example.com/d/k6)',
    );
    expect(() => parseReportInputs({ 'github-token': 'x', 'dashboard-url': 'javascript:alert(1)' })).toThrow(
      'dashboard-url: "javascript:alert(1)" must start with https:// or http://',
    );
  });

  it('reads gate, tolerances, booleans and numbers', () => {
    const inputs = parseReportInputs({
      'github-token': 'x',
      mode: 'comment',
      key: 'checkout-api',
      gate: 'p99, error-rate',
      tolerances: 'p99: 20% 5ms',
      'fail-on-regression': 'False',
      'retention-days': '14',
      baseline: 'base.json',
    });
    expect(inputs).toMatchObject({
      mode: 'comment',
      key: 'checkout-api',
      gate: ['p99', 'error-rate'],
      failOnRegression: false,
      retentionDays: 14,
      baselinePath: 'base.json',
    });
    expect(inputs.tolerances.p99).toEqual({ relativePct: 20, absolute: 5 });
  });
});
