import type { EquivalenceCase } from './harness.ts';

/**
 * The k6-equivalence table: short scripts (about 1-2 s each) covering every executor, groups,
 * the four custom metric types, tagged submetric thresholds, setup/teardown, handleSummary,
 * abortOnFail and the options of issue #9. Every script is deterministic in the fields it lists.
 */

const SPLIT = [2, 4] as const;

const metricsImport = `import { Counter, Gauge, Rate, Trend } from 'k6/metrics';`;

/** A script of 4 VUs sharing 4 iterations of `body`, with `imports` above. */
const fourIterations = (body: string, imports = '') => `
${imports}
export const options = { vus: 4, iterations: 4 };
export default function () { ${body} }
`;

/** A threshold that 4 iterations cross. */
const CROSSED_THRESHOLD = `
export const options = { vus: 4, iterations: 4, thresholds: { iterations: ['count>100'] } };
export default function () {}
`;

export const CASES: EquivalenceCase[] = [
  {
    name: 'shared-iterations',
    covers: 'shared-iterations, groups, checks, 4 custom metric types, tagged submetric thresholds, bytes',
    script: `
import http from 'k6/http';
import { check, group } from 'k6';
import exec from 'k6/execution';
${metricsImport}
const items = new Counter('items');
const ratio = new Rate('odd_ratio');
const level = new Gauge('level');
const work = new Trend('work');
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 20 } },
  thresholds: {
    http_reqs: ['count==20'],
    'http_reqs{scenario:s}': ['count==20'],
    checks: ['rate==1'],
    'checks{group:::outer::inner}': ['rate==1'],
    items: ['count==40'],
    odd_ratio: ['rate==0.5'],
    level: ['value==7'],
    work: ['max==3', 'avg==2'],
  },
};
export default function () {
  const i = exec.scenario.iterationInTest;
  const res = http.get('__TARGET__/ok', { tags: { name: 'ok' } });
  check(res, { 'status 200': (r) => r.status === 200 });
  group('outer', () => { group('inner', () => { check(i, { 'even or odd': () => true }); }); });
  items.add(2);
  ratio.add(i % 2 === 1);
  level.add(7);
  work.add(1); work.add(2); work.add(3);
}
`,
    metrics: [
      'iterations',
      'http_reqs',
      'http_reqs{scenario:s}',
      'data_sent',
      'data_received',
      'checks',
      'items',
      'odd_ratio',
      'level',
      'work',
      'vus_max',
    ],
  },
  {
    name: 'per-vu-iterations',
    covers: 'per-vu-iterations, failing checks, threshold crossed (exit 99)',
    script: `
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: { p: { executor: 'per-vu-iterations', vus: 4, iterations: 3 } },
  thresholds: { checks: ['rate>0.9'], iterations: ['count==12'] },
};
export default function () {
  const res = http.get('__TARGET__/status/404');
  check(res, { 'is 200': (r) => r.status === 200, 'is 404': (r) => r.status === 404 });
}
`,
    metrics: ['iterations', 'http_reqs', 'checks', 'http_req_failed', 'data_sent', 'vus_max'],
  },
  {
    name: 'constant-vus',
    covers: 'constant-vus (3 iterations per VU in 1 s)',
    script: `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { c: { executor: 'constant-vus', vus: 4, duration: '1s' } } };
export default function () { http.get('__TARGET__/ok'); sleep(0.4); }
`,
    // Not vus: k6 samples it once a second, and under load a runner's sample can fall before its
    // VUs start (min 0): the vus-gauge case covers it.
    metrics: ['iterations', 'http_reqs', 'vus_max'],
  },
  {
    name: 'ramping-vus',
    covers: 'ramping-vus, vus_max, threshold on vus_max',
    script: `
import { sleep } from 'k6';
export const options = {
  scenarios: { r: { executor: 'ramping-vus', startVUs: 0, stages: [{ duration: '1s', target: 4 }, { duration: '500ms', target: 4 }] } },
  thresholds: { vus_max: ['value==4'] },
};
export default function () { sleep(0.2); }
`,
    metrics: ['vus_max'],
    checks: false,
  },
  {
    name: 'vus-gauge',
    covers: 'vus and vus_max gauges of a ramping-vus test that ends with 1 VU',
    script: `
import { sleep } from 'k6';
export const options = {
  // 4 VUs for 2 s: k6 samples vus once a second from its init, so a 1 s plateau can fall between
  // two of its own samples under load.
  scenarios: { r: { executor: 'ramping-vus', startVUs: 4, gracefulRampDown: '0s', stages: [{ duration: '2s', target: 4 }, { duration: '100ms', target: 1 }, { duration: '2s', target: 1 }] } },
};
export default function () { sleep(0.1); }
`,
    metrics: ['vus', 'vus_max'],
    checks: false,
  },
  {
    name: 'constant-arrival-rate',
    covers: 'constant-arrival-rate (15 iterations per 2 s for 1 s: 8 iterations)',
    script: `
import http from 'k6/http';
export const options = {
  scenarios: { a: { executor: 'constant-arrival-rate', rate: 15, timeUnit: '2s', duration: '1s', preAllocatedVUs: 4 } },
  thresholds: { iterations: ['count==8'] },
};
export default function () { http.get('__TARGET__/ok'); }
`,
    metrics: ['iterations', 'http_reqs', 'vus_max'],
  },
  {
    name: 'ramping-arrival-rate',
    covers: 'ramping-arrival-rate (0 -> 20 iterations/s over 1 s, then 425 ms at 20/s)',
    script: `
import http from 'k6/http';
export const options = {
  scenarios: { a: { executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s', preAllocatedVUs: 4, stages: [{ duration: '1s', target: 20 }, { duration: '425ms', target: 20 }] } },
};
export default function () { http.get('__TARGET__/ok'); }
`,
    metrics: ['iterations', 'http_reqs', 'vus_max'],
  },
  {
    name: 'externally-controlled',
    covers: 'externally-controlled: k6 v2 refuses it (exit 104)',
    script: `
import { sleep } from 'k6';
export const options = { scenarios: { e: { executor: 'externally-controlled', vus: 4, maxVUs: 4, duration: '1s' } } };
export default function () { sleep(0.4); }
`,
    metrics: ['vus_max', 'iterations'],
  },
  {
    name: 'setup-teardown',
    covers: 'setup() and teardown() once, setup data',
    script: `
import { Counter } from 'k6/metrics';
const setups = new Counter('setup_calls');
const teardowns = new Counter('teardown_calls');
const seen = new Counter('setup_data_seen');
export const options = { vus: 4, iterations: 8, thresholds: { setup_calls: ['count==1'], teardown_calls: ['count==1'] } };
export function setup() { setups.add(1); return { token: 'abc' }; }
export default function (data) { if (data.token === 'abc') seen.add(1); }
export function teardown(data) { if (data.token === 'abc') teardowns.add(1); }
`,
    metrics: ['setup_calls', 'teardown_calls', 'setup_data_seen', 'iterations'],
  },
  {
    name: 'setup-throws',
    covers: "setup() throws: the run fails before any load, with k6's error (exit 107)",
    script: `
import { Counter } from 'k6/metrics';
const work = new Counter('work_done');
export const options = { vus: 4, iterations: 8 };
export function setup() { throw new Error('setup boom'); }
export default function () { work.add(1); }
`,
    metrics: [],
  },
  {
    name: 'setup-timeout',
    covers: 'setup() passes setupTimeout (exit 100)',
    script: `
import { sleep } from 'k6';
export const options = { vus: 4, iterations: 8, setupTimeout: '1s' };
export function setup() { sleep(2); }
export default function () {}
`,
    metrics: [],
  },
  {
    name: 'teardown-throws',
    covers:
      'teardown() throws once, after the whole test (exit 107); its counter and the load are in the result',
    script: `
import { Counter } from 'k6/metrics';
const teardowns = new Counter('teardown_calls');
export const options = { vus: 4, iterations: 8 };
export default function () {}
export function teardown() { teardowns.add(1); throw new Error('teardown boom'); }
`,
    metrics: ['iterations', 'teardown_calls'],
  },
  {
    name: 'teardown-timeout',
    covers: 'teardown() passes teardownTimeout (exit 101)',
    script: `
import { sleep } from 'k6';
export const options = { vus: 4, iterations: 8, teardownTimeout: '1s' };
export default function () {}
export function teardown() { sleep(2); }
`,
    metrics: ['iterations'],
  },
  {
    name: 'no-setup-flag',
    covers: '--no-setup: setup() never runs, VUs get no data, teardown() still runs once',
    script: `
import { Counter } from 'k6/metrics';
const setups = new Counter('setup_calls');
const teardowns = new Counter('teardown_calls');
const noData = new Counter('no_setup_data');
export const options = { vus: 4, iterations: 8 };
export function setup() { setups.add(1); return { token: 'abc' }; }
export default function (data) { if (data === undefined) noData.add(1); }
export function teardown() { teardowns.add(1); }
`,
    k6Args: ['--no-setup'],
    metrics: ['setup_calls', 'teardown_calls', 'no_setup_data', 'iterations'],
  },
  {
    name: 'no-teardown-env',
    covers: 'K6_NO_TEARDOWN=true: teardown() never runs, setup() once',
    script: `
import { Counter } from 'k6/metrics';
const setups = new Counter('setup_calls');
const teardowns = new Counter('teardown_calls');
export const options = { vus: 4, iterations: 8 };
export function setup() { setups.add(1); }
export default function () {}
export function teardown() { teardowns.add(1); }
`,
    env: { K6_NO_TEARDOWN: 'true' },
    metrics: ['setup_calls', 'teardown_calls', 'iterations'],
  },
  {
    name: 'handleSummary',
    covers: 'handleSummary() once on the whole test, its data object',
    script: `
import { check } from 'k6';
export const options = { vus: 4, iterations: 8, thresholds: { iterations: ['count==8'] } };
export function setup() { return { token: 'abc' }; }
export default function () { check(1, { one: (v) => v === 1 }); }
export function handleSummary(data) {
  const m = data.metrics;
  return { 'summary.json': JSON.stringify({
    keys: Object.keys(data).sort(),
    iterations: m.iterations.values.count,
    checks: m.checks.values.passes,
    thresholdOk: m.iterations.thresholds['count==8'].ok,
    trendStats: data.options && data.options.summaryTrendStats,
    setupData: data.setup_data,
    rootChecks: data.root_group && data.root_group.checks.map((c) => c.name + ':' + c.passes),
  }) };
}
`,
    metrics: ['iterations'],
    files: ['summary.json'],
  },
  {
    name: 'abortOnFail-global',
    covers: 'abortOnFail crossed on the whole test: stops early, exit 99',
    script: `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: { c: { executor: 'constant-vus', vus: 4, duration: '6s' } },
  thresholds: { http_req_failed: [{ threshold: 'rate<0.5', abortOnFail: true }] },
};
export default function () { http.get('__TARGET__/status/500'); sleep(0.1); }
`,
    metrics: [],
    endsEarlyUnderS: 5,
  },
  {
    name: 'abortOnFail-slice',
    covers: "abortOnFail crossed on one runner's slice only (global error rate 25% < 30%)",
    script: `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: {
    // 3.6 s: k6 judges thresholds every 2 s, so a slice's abortOnFail fires for certain.
    bad: { executor: 'per-vu-iterations', vus: 1, iterations: 24, exec: 'bad' },
    good: { executor: 'per-vu-iterations', vus: 3, iterations: 24, exec: 'good' },
  },
  thresholds: { http_req_failed: [{ threshold: 'rate<0.3', abortOnFail: true }] },
};
export function bad() { http.get('__TARGET__/status/500'); sleep(0.15); }
export function good() { http.get('__TARGET__/ok'); sleep(0.15); }
`,
    metrics: ['http_reqs', 'http_req_failed', 'iterations'],
  },
  {
    name: 'threshold-key-spaces',
    covers: 'submetric key with spaces and quotes, as k6 trims it',
    script: `
import http from 'k6/http';
export const options = {
  vus: 4, iterations: 4,
  thresholds: {
    'http_req_duration{ name:slow }': ['p(95)<100'],
    "http_reqs{ name : 'slow' }": ['count==4'],
  },
};
export default function () { http.get('__TARGET__/slow?ms=150', { tags: { name: 'slow' } }); }
`,
    metrics: ['http_reqs{name:slow}'],
  },
  {
    name: 'threshold-numbers',
    covers: 'threshold numbers as Go parses them: NaN, 0x1p3, 1_000, bare p',
    script: `
export const options = {
  vus: 4, iterations: 8,
  thresholds: { iterations: ['count==0x1p3', 'count<1_000', 'count!=NaN'], iteration_duration: ['p<1e9'] },
};
export default function () {}
`,
    metrics: ['iterations'],
  },
  {
    name: 'custom-trend-time',
    covers: "custom Trend('x', true) in a run shorter than 10 s: contains time",
    script: `
import { Trend } from 'k6/metrics';
const t = new Trend('think_time', true);
export const options = { vus: 4, iterations: 4 };
export default function () { t.add(5); }
`,
    metrics: ['think_time'],
  },
  {
    name: 'user-runner-tag',
    covers: "the script's own tag runner: 'ci-linux-1' and a threshold on it",
    script: `
import http from 'k6/http';
export const options = {
  vus: 4, iterations: 6, tags: { runner: 'ci-linux-1' },
  thresholds: { 'http_reqs{runner:ci-linux-1}': ['count==6'] },
};
export default function () { http.get('__TARGET__/ok'); }
`,
    metrics: ['http_reqs{runner:ci-linux-1}'],
  },
  {
    name: 'iterations-without-vus',
    covers: 'options { iterations: 5 } without vus (1 VU)',
    script: `
export const options = { iterations: 5 };
export default function () {}
`,
    metrics: ['iterations', 'vus_max'],
  },
  {
    name: 'iterations-flag',
    covers: '--iterations 5 without --vus',
    script: 'export default function () {}\n',
    k6Args: ['--iterations', '5'],
    metrics: ['iterations', 'vus_max'],
  },
  {
    name: 'iterations-env',
    covers: 'K6_ITERATIONS=5 without vus',
    script: 'export default function () {}\n',
    env: { K6_ITERATIONS: '5' },
    metrics: ['iterations', 'vus_max'],
  },
  {
    name: 'idle-runners',
    covers: 'a scenario with fewer VUs than runners',
    script: `
export const options = {
  scenarios: {
    one: { executor: 'shared-iterations', vus: 1, iterations: 3 },
    many: { executor: 'shared-iterations', vus: 4, iterations: 8 },
  },
};
export default function () {}
`,
    metrics: ['iterations', 'iterations{scenario:one}', 'vus_max'],
  },
  {
    name: 'idle-runner',
    covers: 'two scenarios of 1 VU each: k6 gives both VUs to the first segment, the other runners idle',
    script: `
export const options = {
  scenarios: {
    a: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'a' },
    b: { executor: 'per-vu-iterations', vus: 1, iterations: 3, exec: 'b' },
  },
};
export function a() {}
export function b() {}
`,
    metrics: ['iterations', 'iterations{scenario:a}', 'iterations{scenario:b}'],
  },
  {
    name: 'gauge-one-runner',
    covers: 'gauge.add(-5) seen by one runner only',
    script: `
import exec from 'k6/execution';
import { Gauge } from 'k6/metrics';
const g = new Gauge('temperature');
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 4, iterations: 1 } } };
export default function () { if (exec.scenario.iterationInTest === 0) g.add(-5); }
`,
    metrics: ['temperature'],
  },
  {
    name: 'console-log',
    covers: 'console.log in the script is shown',
    script: fourIterations("console.log('EQ-CONSOLE-LINE');"),
    metrics: ['iterations'],
    console: ['EQ-CONSOLE-LINE'],
  },
  {
    name: 'test-abort',
    covers: 'test.abort() exits 108',
    script: fourIterations("exec.test.abort('stop here');", "import exec from 'k6/execution';"),
    metrics: [],
  },
  {
    name: 'test-fail',
    covers: 'exec.test.fail() exits 110',
    script: fourIterations("exec.test.fail('mark failed');", "import exec from 'k6/execution';"),
    metrics: [],
  },
  {
    name: 'test-fail-one-runner',
    covers: "exec.test.fail() on one runner's VU: the test runs on to its end (exit 110)",
    script: `
import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = {
  scenarios: {
    quick: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'quick' },
    slow: { executor: 'per-vu-iterations', vus: 1, iterations: 3, exec: 'slow' },
  },
};
export function quick() { exec.test.fail('mark failed'); }
export function slow() { sleep(0.3); }
`,
    metrics: ['iterations', 'iterations{scenario:slow}'],
  },
  {
    name: 'no-thresholds-flag',
    covers: '--no-thresholds: a crossed threshold does not fail the run',
    script: CROSSED_THRESHOLD,
    k6Args: ['--no-thresholds'],
    metrics: ['iterations'],
  },
  {
    name: 'no-thresholds-env',
    covers: 'K6_NO_THRESHOLDS=true: a crossed threshold does not fail the run',
    script: CROSSED_THRESHOLD,
    env: { K6_NO_THRESHOLDS: 'true' },
    metrics: ['iterations'],
  },
  {
    name: 'summary-mode',
    covers: '--summary-mode full is accepted',
    script: fourIterations(''),
    k6Args: ['--summary-mode', 'full'],
    metrics: ['iterations'],
  },
  {
    name: 'secret-source',
    covers: '--secret-source mock=… reaches the script',
    script: `
import secrets from 'k6/secrets';
import { check } from 'k6';
export const options = { vus: 4, iterations: 4 };
export default async function () {
  const v = await secrets.get('token');
  check(v, { 'secret read': (s) => s === 'letmein' });
}
`,
    k6Args: ['--secret-source', 'mock=token=letmein'],
    metrics: ['checks'],
  },
  {
    name: 'out-json-file',
    covers: '--out json=raw.json without {runner}: one valid file',
    script: fourIterations("http.get('__TARGET__/ok');", "import http from 'k6/http';"),
    k6Args: ['--out', 'json=raw.json'],
    metrics: ['http_reqs'],
    points: { file: 'raw.json', metric: 'http_reqs' },
    // The product refuses it with a one-line error naming the flag (the issue allows a clear refusal).
    knownFailing: { runners: SPLIT, row: '--out json=raw.json (no {runner}): refused with a clear error' },
  },
];
