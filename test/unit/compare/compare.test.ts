import { describe, expect, it } from 'vitest';
import { compareResults, parseGate, parseTolerances } from '../../../src/compare/compare.ts';
import { environmentDifferences } from '../../../src/compare/environment.ts';
import { DEFAULT_GATE, DEFAULT_TOLERANCES, judgeChange } from '../../../src/compare/judgement.ts';
import { makeResult } from '../../support/results.ts';

const options = { tolerances: DEFAULT_TOLERANCES, gate: DEFAULT_GATE };
const ms = (relativePct: number, absolute: number) => ({ relativePct, absolute });

describe('judgeChange: direction-aware, beyond both tolerances', () => {
  it('lower is better for latency, higher for RPS', () => {
    expect(judgeChange(22, 30, 'lower', ms(10, 1), 'ms')).toBe('worse');
    expect(judgeChange(30, 22, 'lower', ms(10, 1), 'ms')).toBe('better');
    expect(judgeChange(400, 300, 'higher', ms(10, 1), '/s')).toBe('worse');
    expect(judgeChange(300, 400, 'higher', ms(10, 1), '/s')).toBe('better');
  });

  it('keeps a 0.3 ms change on 2 ms under the 1 ms noise floor, though it is +15%', () => {
    expect(judgeChange(2, 2.3, 'lower', ms(10, 1), 'ms')).toBe('unchanged');
    expect(judgeChange(2, 3.5, 'lower', ms(10, 1), 'ms')).toBe('worse');
  });

  it('keeps a 5 ms change on 100 ms under the 10% relative tolerance, though it is over the floor', () => {
    expect(judgeChange(100, 105, 'lower', ms(10, 1), 'ms')).toBe('unchanged');
  });

  it('does not count a change exactly at the tolerance', () => {
    expect(judgeChange(100, 110, 'lower', ms(10, 1), 'ms')).toBe('unchanged');
    expect(judgeChange(100, 110.01, 'lower', ms(10, 1), 'ms')).toBe('worse');
  });

  it('reads absolute tolerances of rates in percentage points', () => {
    // 0% -> 0.2% errors: +0.2 pp, over the 0.1 pp floor; relative change from 0 is infinite.
    expect(judgeChange(0, 0.002, 'lower', ms(10, 0.1), 'pp')).toBe('worse');
    expect(judgeChange(0, 0.0005, 'lower', ms(10, 0.1), 'pp')).toBe('unchanged');
    // 10% -> 10.5%: +0.5 pp but only +5% relative.
    expect(judgeChange(0.1, 0.105, 'lower', ms(10, 0.1), 'pp')).toBe('unchanged');
    expect(judgeChange(0.999, 0.95, 'higher', ms(0.5, 0.1), 'pp')).toBe('worse');
  });

  it('is missing when either side has no value', () => {
    expect(judgeChange(undefined, 3, 'lower', ms(10, 1), 'ms')).toBe('missing');
    expect(judgeChange(3, undefined, 'lower', ms(10, 1), 'ms')).toBe('missing');
  });
});

describe('compareResults', () => {
  it('finds regressions with the right direction per metric and orders them worst first', () => {
    const base = makeResult();
    const head = makeResult({ rps: 300, p95: 35, p99: 41, errorRate: 0.02, checksRate: 0.98 });
    const c = compareResults(base, head, options);
    const byId = Object.fromEntries(c.keyMetrics.map((d) => [d.id, d]));
    expect(byId.rps!.change).toBe('worse');
    expect(byId.p95!.change).toBe('worse');
    expect(byId.p99!.change).toBe('unchanged'); // +1 ms, under 2 ms
    expect(byId['error-rate']!.change).toBe('worse');
    expect(byId.checks!.change).toBe('worse');
    expect(byId.p50!.change).toBe('unchanged');
    expect(c.gatedRegressions.map((d) => d.id)).toEqual(['error-rate', 'p95', 'rps', 'checks']);
    expect(byId.p95!.delta).toBeCloseTo(13);
    expect(byId.p95!.deltaPct).toBeCloseTo((13 / 22) * 100);
  });

  it('gates only the metrics the gate names; the others are regressions that do not gate', () => {
    const c = compareResults(makeResult(), makeResult({ p50: 20, p95: 40 }), {
      tolerances: DEFAULT_TOLERANCES,
      gate: ['p99'],
    });
    expect(c.regressions.map((d) => [d.id, d.gated])).toEqual([
      ['p50', false],
      ['p95', false],
    ]);
    expect(c.gatedRegressions).toEqual([]);
  });

  it('reads latency from expected responses when both results have them, else from all requests', () => {
    const base = makeResult();
    expect(compareResults(base, makeResult(), options).latencyKey).toBe(
      'http_req_duration{expected_response:true}',
    );
    delete base.metrics['http_req_duration{expected_response:true}'];
    expect(compareResults(base, makeResult(), options).latencyKey).toBe('http_req_duration');
  });

  it('shows a metric that one side lacks as missing, never as a regression', () => {
    const base = makeResult();
    delete base.metrics.checks;
    const c = compareResults(base, makeResult({ checksRate: 0.1 }), options);
    expect(c.keyMetrics.find((d) => d.id === 'checks')!.change).toBe('missing');
    expect(c.regressions).toEqual([]);
  });

  it('compares tagged submetrics per scenario, never gated', () => {
    const base = makeResult();
    const head = makeResult();
    base.metrics['http_req_duration{scenario:api}'] = {
      type: 'trend',
      contains: 'time',
      values: { 'p(95)': 50 },
    };
    head.metrics['http_req_duration{scenario:api}'] = {
      type: 'trend',
      contains: 'time',
      values: { 'p(95)': 80 },
    };
    head.metrics['http_reqs{scenario:new}'] = {
      type: 'counter',
      contains: 'default',
      values: { count: 10, rate: 1 },
    };
    head.metrics['data_received{scenario:api}'] = {
      type: 'counter',
      contains: 'data',
      values: { count: 1, rate: 1 },
    };
    const c = compareResults(base, head, options);
    expect(c.submetrics.map((d) => [d.label, d.change, d.gated])).toEqual([
      ['http_req_duration{scenario:api}', 'worse', false],
      ['http_reqs{scenario:new}', 'missing', false],
    ]);
    expect(c.gatedRegressions).toEqual([]);
    expect(c.regressions.map((d) => d.label)).toEqual(['http_req_duration{scenario:api}']);
  });
});

describe('environmentDifferences', () => {
  it('names what differs: runners, image, resources (key order ignored), script', () => {
    const base = makeResult({
      environment: { runnerImage: 'grafana/k6:1.4.0', resources: { limits: { cpu: '1', memory: '1Gi' } } },
    }).environment;
    const same = makeResult({
      environment: { runnerImage: 'grafana/k6:1.4.0', resources: { limits: { memory: '1Gi', cpu: '1' } } },
    }).environment;
    expect(environmentDifferences(base, same)).toEqual([]);
    const other = makeResult({
      environment: {
        runners: 4,
        runnerImage: 'grafana/k6:1.5.0',
        scriptHash: 'ffff',
        resources: { limits: { cpu: '2' } },
      },
    }).environment;
    expect(environmentDifferences(base, other)).toEqual([
      { field: 'runners', base: '2', head: '4' },
      { field: 'runnerImage', base: 'grafana/k6:1.4.0', head: 'grafana/k6:1.5.0' },
      { field: 'resources', base: '{"limits":{"cpu":"1","memory":"1Gi"}}', head: '{"limits":{"cpu":"2"}}' },
      { field: 'scriptHash', base: 'a1b2c3', head: 'ffff' },
    ]);
  });
});

describe('tolerances and gate inputs', () => {
  it('overrides only the parts given, per metric', () => {
    const t = parseTolerances('p95: 5% 2ms\nerror-rate: 0.2pp; rps: 3%\n# a comment');
    expect(t.p95).toEqual({ relativePct: 5, absolute: 2 });
    expect(t['error-rate']).toEqual({ relativePct: 10, absolute: 0.2 });
    expect(t.rps).toEqual({ relativePct: 3, absolute: 1 });
    expect(t.p99).toEqual(DEFAULT_TOLERANCES.p99);
    expect(DEFAULT_TOLERANCES.p95).toEqual({ relativePct: 10, absolute: 1 }); // defaults untouched
  });

  it('refuses unknown metrics and units that do not fit the metric, in one line naming the input', () => {
    expect(() => parseTolerances('p97: 5%')).toThrow(
      'tolerances: unknown metric "p97"; use rps, p50, p90, p95, p99, error-rate, checks',
    );
    expect(() => parseTolerances('p95: 2pp')).toThrow(
      'tolerances: "2pp" for p95 must be a percentage (5%) or ms (e.g. 2ms)',
    );
    expect(() => parseTolerances('p95 5%')).toThrow('tolerances: "p95 5%" is not "metric: value"');
  });

  it('parses the gate list, none, and refuses unknown ids', () => {
    expect(parseGate(undefined)).toEqual(DEFAULT_GATE);
    expect(parseGate('p95, error-rate\nrps')).toEqual(['p95', 'error-rate', 'rps']);
    expect(parseGate('none')).toEqual([]);
    expect(() => parseGate('p95,latency')).toThrow('gate: unknown metric "latency"');
  });
});
