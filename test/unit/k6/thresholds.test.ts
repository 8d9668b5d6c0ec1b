import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/errors.ts';
import { parseGoFloat } from '../../../src/k6/go-syntax.ts';
import { evaluateThresholds, findMetric } from '../../../src/k6/thresholds.ts';
import {
  parseMetricKey,
  parseThresholdExpression,
  parseThresholds,
} from '../../../src/k6/thresholds-parser.ts';
import type { MetricResult } from '../../../src/result/schema.ts';

describe('threshold expressions (k6 thresholds_parser.go rules)', () => {
  it.each([
    ['p(95)<500', 'p', '<', 500, 'p(95)'],
    ['p(99.9) <= 1500', 'p', '<=', 1500, 'p(99.9)'],
    ['avg>=1.5', 'avg', '>=', 1.5, 'avg'],
    ['min > 0', 'min', '>', 0, 'min'],
    ['med===2', 'med', '===', 2, 'med'],
    ['max==3', 'max', '==', 3, 'max'],
    ['count!=0', 'count', '!=', 0, 'count'],
    ['rate<0.01', 'rate', '<', 0.01, 'rate'],
    ['value>1e3', 'value', '>', 1000, 'value'],
  ])('%s', (source, aggregation, operator, value, valueKey) => {
    expect(parseThresholdExpression(source)).toMatchObject({ aggregation, operator, value, valueKey });
  });

  it.each([
    ['p95<500', /unknown aggregation "p95"/],
    ['p(101)<5', /from 0 to 100/],
    ['avg<fast', /"fast" is not a number/],
    ['avg', /malformed/],
    ['avg<', /malformed/],
    ['total<5', /unknown aggregation/],
  ])('refuses %s with a one-line reason', (source, reason) => {
    expect(() => parseThresholdExpression(source, 'http_req_duration')).toThrowError(ConfigurationError);
    expect(() => parseThresholdExpression(source, 'http_req_duration')).toThrowError(reason);
  });

  it('splits submetric keys like k6', () => {
    expect(parseMetricKey('http_req_duration{scenario:api,name:login}')).toEqual({
      name: 'http_req_duration',
      tags: [
        ['scenario', 'api'],
        ['name', 'login'],
      ],
    });
    expect(parseMetricKey('iteration_duration{group:::g1}').tags).toEqual([['group', '::g1']]);
    expect(() => parseMetricKey('http_reqs{status}')).toThrowError(/has no value/);
    expect(() => parseMetricKey('http_reqs{status:200')).toThrowError(/malformed/);
  });

  // Each checked against k6 v2.2.0 (`k6 run` exit 0/99 = accepted, 104 = refused).
  it.each([
    ['1_000', 1000],
    ['0x1p3', 8],
    ['0x1.8p1', 3],
    ['0x_1p3', 8],
    ['NaN', Number.NaN],
    ['+Inf', Infinity],
    ['-infinity', -Infinity],
    ['.5e1', 5],
    ['5.', 5],
    ['1e-400', 0],
  ])('reads the number %s as Go does', (text, value) => {
    expect(parseGoFloat(text)).toBe(value);
  });

  it.each(['0x10', '1__0', '_1', '1_e3', '1e400', '+nan', 'infin', ' 95', ''])(
    'refuses the number "%s" as Go does',
    (text) => {
      expect(parseGoFloat(text)).toBeUndefined();
    },
  );

  it('accepts what k6 accepts on both sides: NaN, hex, underscores, a bare p (= p(0), the minimum)', () => {
    expect(parseThresholdExpression('count!=NaN')).toMatchObject({ operator: '!=', value: Number.NaN });
    expect(parseThresholdExpression('p<1e9')).toMatchObject({ aggregation: 'p', percentile: 0 });
    expect(() => parseThresholdExpression('p( 95)<1')).toThrowError(/from 0 to 100/);
    const rows = evaluateThresholds(
      parseThresholds({
        iterations: ['count==0x1p3', 'count<1_000', 'count!=NaN', 'count==NaN'],
        work: ['p<2'],
      }),
      {
        iterations: metric('counter', { count: 8, rate: 8 }),
        work: metric('trend', { count: 3, min: 1, max: 3, avg: 2, med: 2 }),
      },
    );
    expect(rows.map((r) => [r.expression, r.ok])).toEqual([
      ['count==0x1p3', true],
      ['count<1_000', true],
      ['count!=NaN', true],
      ['count==NaN', false],
      ['p<2', true],
    ]);
  });

  it('reads submetric keys as k6 does: trimmed, unquoted, any spelling of the same tags', () => {
    expect(parseMetricKey('http_req_duration{ name : \'slow\' , scenario:"api" }').tags).toEqual([
      ['name', 'slow'],
      ['scenario', 'api'],
    ]);
    // The runner's summary names the submetric after the trimmed text between the braces.
    const metrics = { 'http_req_duration{name:slow}': 1, 'http_reqs{a:1,b:2}': 2, http_reqs: 3 };
    expect(findMetric(metrics, 'http_req_duration{ name:slow }')).toBe(1);
    expect(findMetric(metrics, "http_reqs{ b:'2', a : 1 }")).toBe(2);
    expect(findMetric(metrics, 'http_reqs')).toBe(3);
    expect(findMetric(metrics, 'http_reqs{a:2}')).toBeUndefined();
    const rows = evaluateThresholds(parseThresholds({ 'http_req_duration{ name:slow }': ['p(95)<100'] }), {
      'http_req_duration{name:slow}': metric('trend', {
        count: 4,
        min: 300,
        max: 310,
        avg: 305,
        med: 305,
        'p(95)': 309,
      }),
    });
    expect(rows[0]).toMatchObject({ metric: 'http_req_duration{ name:slow }', ok: false, observed: 309 });
  });

  it('reads inspect output: strings and {threshold, abortOnFail} objects', () => {
    const parsed = parseThresholds({
      http_req_duration: ['p(95)<500', { threshold: 'max<1000', abortOnFail: true, delayAbortEval: '10s' }],
    });
    expect(parsed).toHaveLength(2);
    expect(parsed[1]).toMatchObject({
      metric: 'http_req_duration',
      abortOnFail: true,
      delayAbortEval: '10s',
    });
    expect(() => parseThresholds({ checks: 'rate>0.9' })).toThrowError(/must be a list/);
  });
});

function metric(type: MetricResult['type'], values: Record<string, number>): MetricResult {
  return { type, contains: type === 'trend' ? 'time' : 'default', values };
}

describe('threshold evaluation on the aggregate', () => {
  it('judges each aggregation on the global values', () => {
    const metrics = {
      http_req_duration: metric('trend', {
        count: 10,
        min: 1,
        max: 900,
        avg: 50,
        med: 20,
        'p(95)': 450,
        'p(99.9)': 880,
      }),
      http_reqs: metric('counter', { count: 400, rate: 40 }),
      http_req_failed: metric('rate', { rate: 0.02, passes: 8, fails: 392 }),
      vus: metric('gauge', { value: 10, min: 0, max: 10 }),
    };
    const rows = evaluateThresholds(
      parseThresholds({
        http_req_duration: ['p(95)<500', 'p(99.9)<800', 'avg<=50', 'max<1000', 'med>20'],
        http_reqs: ['count>=400', 'rate>50'],
        http_req_failed: ['rate<0.01'],
        vus: ['value==10'],
      }),
      metrics,
    );
    expect(rows.map((r) => [r.expression, r.ok, r.observed])).toEqual([
      ['p(95)<500', true, 450],
      ['p(99.9)<800', false, 880],
      ['avg<=50', true, 50],
      ['max<1000', true, 900],
      ['med>20', false, 20],
      ['count>=400', true, 400],
      ['rate>50', false, 40],
      ['rate<0.01', false, 0.02],
      ['value==10', true, 10],
    ]);
    expect(metrics.http_req_duration.thresholds?.['p(99.9)<800']).toEqual({ ok: false, observed: 880 });
  });

  it('uses k6 end-of-test semantics for empty metrics', () => {
    const rows = evaluateThresholds(
      parseThresholds({
        'http_req_duration{name:never}': ['p(95)>1'],
        errors: ['count<1'],
        http_req_failed: ['rate<0.5'],
      }),
      { http_req_failed: metric('rate', { rate: 0, passes: 0, fails: 0 }) },
    );
    // An empty trend judges 0, an absent counter count 0, a rate with no samples passes.
    expect(rows.map((r) => [r.ok, r.observed])).toEqual([
      [false, 0],
      [true, 0],
      [true, undefined],
    ]);
  });

  it('refuses an aggregation the metric type lacks, as k6 does', () => {
    expect(() =>
      evaluateThresholds(parseThresholds({ http_reqs: ['p(95)<5'] }), {
        http_reqs: metric('counter', { count: 1, rate: 1 }),
      }),
    ).toThrowError(/p\(N\) is not supported on a counter metric; use count, rate/);
  });
});

describe('a threshold at the exact percentile (issue 25, defect 1)', () => {
  // k6 gets p(99)=395.01 for samples 0..399; the merge of 2 runners gave 395.01000000000005.
  const merged = { count: 400, min: 0, max: 399, avg: 199.5, med: 199.5, 'p(99)': 395.01000000000005 };
  it.each([
    ['p(99)<=395.01', true],
    ['p(99)==395.01', true],
    ['p(99)>=395.01', true],
    ['p(99)<395.01', false],
    ['p(99)>395.01', false],
    ['p(99)!=395.01', false],
    ['p(99)<=395.0099', false],
  ])('%s on a merged 395.01000000000005 is %s, as k6 judges 395.01', (expression, ok) => {
    const rows = evaluateThresholds(parseThresholds({ pct: [expression] }), {
      pct: metric('trend', merged),
    });
    expect(rows[0]!.ok).toBe(ok);
  });

  it('min and max are exact: no resolution is applied to them', () => {
    const rows = evaluateThresholds(parseThresholds({ pct: ['max<=398.99999999999994'] }), {
      pct: metric('trend', { ...merged, max: 399 }),
    });
    expect(rows[0]!.ok).toBe(false);
  });
});
