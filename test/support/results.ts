import { RESULT_SCHEMA, type RunEnvironment, type RunResult } from '../../src/result/schema.ts';

/** Key numbers of a synthetic result: latency in ms, rps per second, rates as fractions. */
export interface Shape {
  rps?: number;
  p50?: number;
  p90?: number;
  p95?: number;
  p99?: number;
  errorRate?: number;
  checksRate?: number;
  requests?: number;
  environment?: Partial<RunEnvironment>;
  verdict?: RunResult['verdict'];
}

/**
 * A result JSON as the run action writes it (src/result/schema.ts), with the given key numbers, two
 * runners, one threshold and one check. 60,000 requests: enough for the error rate (0.1%) to be
 * shown within its 0.1 pp tolerance by the three-way verdict (src/compare/significance.ts).
 */
export function makeResult(shape: Shape = {}, overrides: Partial<RunResult> = {}): RunResult {
  const s = {
    rps: 400,
    p50: 10,
    p90: 18,
    p95: 22,
    p99: 40,
    errorRate: 0.001,
    checksRate: 0.999,
    requests: 60000,
    ...shape,
  };
  const failed = Math.round(s.requests * s.errorRate);
  // The latency trend's values over `count` requests, from the given percentiles.
  const latency = (count: number) => ({
    count,
    min: 1,
    max: s.p99 * 3,
    avg: s.p50 * 1.1,
    med: s.p50,
    'p(50)': s.p50,
    'p(90)': s.p90,
    'p(95)': s.p95,
    'p(99)': s.p99,
  });
  const checkPasses = Math.round(s.requests * s.checksRate);
  return {
    schema: RESULT_SCHEMA,
    verdict: s.verdict ?? 'passed',
    failures:
      s.verdict === 'failed' ? ['thresholds crossed on the aggregate: http_req_duration p(95)<20'] : [],
    thresholdsOk: s.verdict !== 'failed',
    script: 'examples/quickstart.js',
    environment: {
      backend: 'kubernetes',
      k6Version: 'v2.2.0',
      runners: 2,
      scriptHash: 'a1b2c3',
      ...s.environment,
    },
    startedAt: '2026-01-10T08:00:00.000Z',
    endedAt: '2026-01-10T08:00:15.000Z',
    durationS: 15,
    startSkewMs: 1.7,
    metrics: {
      http_reqs: { type: 'counter', contains: 'default', values: { count: s.requests, rate: s.rps } },
      http_req_duration: {
        type: 'trend',
        contains: 'time',
        values: latency(s.requests),
        thresholds: { 'p(95)<500': { ok: true, observed: s.p95 } },
      },
      'http_req_duration{expected_response:true}': {
        type: 'trend',
        contains: 'time',
        values: latency(s.requests - failed),
      },
      http_req_failed: {
        type: 'rate',
        contains: 'default',
        values: { rate: s.errorRate, passes: failed, fails: s.requests - failed },
      },
      checks: {
        type: 'rate',
        contains: 'default',
        values: { rate: s.checksRate, passes: checkPasses, fails: s.requests - checkPasses },
      },
      iterations: { type: 'counter', contains: 'default', values: { count: s.requests, rate: s.rps } },
      vus_max: { type: 'gauge', contains: 'default', values: { value: 20, min: 20, max: 20 } },
    },
    rootGroup: {
      name: '',
      path: '',
      groups: [],
      checks: [
        {
          name: 'status is 200',
          path: '::status is 200',
          passes: checkPasses,
          fails: s.requests - checkPasses,
        },
      ],
    },
    thresholds: [
      {
        metric: 'http_req_duration',
        expression: 'p(95)<500',
        ok: s.verdict !== 'failed',
        observed: s.p95,
        abortOnFail: false,
      },
    ],
    runners: [0, 1].map((index) => ({
      index,
      segment: index === 0 ? '0:1/2' : '1/2:1',
      exitCode: 0,
      exit: 'exit 0: completed',
      ok: true,
      startOffsetMs: index * 1.7,
      durationS: 15,
      requests: s.requests / 2,
      rps: s.rps / 2,
      p95Ms: s.p95,
      iterations: s.requests / 2,
    })),
    ...overrides,
  };
}
