/**
 * Scale benchmark of the aggregation path: parse the runners' summaries, aggregate them, judge the
 * thresholds and render the markdown report, for 1, 10, 100 and 1,000 synthetic runners. Runners
 * write the compact summary (`compactSummary`, src/k6/compact-summary.ts), made here from the same data by
 * the same function; parsing k6's own `--summary-export` (the fallback) is timed beside it.
 * Each runner's summary looks like a real one: 9 built-in trends plus 5 custom ones, 6 trend
 * submetrics, counters, rates, gauges, 20 checks in two groups, every trend with the full
 * `--summary-trend-stats` grid (plan.ts), keys in that order and indented as k6 writes the file.
 * The machine is shared: besides the wall time, the process CPU time of the whole pass is reported,
 * which other processes disturb less. Prints the figures and writes bench/results/scale.{json,md}.
 *
 *   npm run bench:scale
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compactSummary } from '../src/k6/compact-summary.ts';
import { parseRunnerSummary } from '../src/k6/summary.ts';
import { evaluateThresholds, thresholdPercentiles } from '../src/k6/thresholds.ts';
import { parseThresholds, percentileKey } from '../src/k6/thresholds-parser.ts';
import { renderReport } from '../src/render/markdown.ts';
import { aggregateSummaries } from '../src/result/aggregate.ts';
import { QUANTILE_GRID } from '../src/result/quantile-grid.ts';
import { RESULT_SCHEMA, type RunResult } from '../src/result/schema.ts';
import { summaryTrendStats } from '../src/run/plan.ts';

const RESULTS = path.join(import.meta.dirname, 'results');

const TRENDS = [
  'http_req_duration',
  'http_req_waiting',
  'http_req_connecting',
  'http_req_tls_handshake',
  'http_req_sending',
  'http_req_receiving',
  'http_req_blocked',
  'iteration_duration',
  'group_duration',
  'login_time',
  'search_time',
  'cart_time',
  'checkout_time',
  'ttfb_custom',
  'http_req_duration{expected_response:true}',
  'http_req_duration{scenario:browse}',
  'http_req_duration{scenario:buy}',
  'http_req_duration{name:search}',
  'http_req_duration{name:checkout}',
  'iteration_duration{scenario:buy}',
];

const THRESHOLDS = {
  http_req_duration: ['p(95)<500', 'p(99)<1500', 'avg<300'],
  'http_req_duration{scenario:buy}': ['p(99.9)<2000'],
  'http_req_duration{name:search}': ['p(97.5)<800'],
  http_req_failed: ['rate<0.01'],
  checks: ['rate>0.99'],
};

/** Log-normal quantile for a runner whose median is `median` ms: exp(ln m + σ·z(p)). */
function lognormalAt(median: number, sigma: number, p: number): number {
  // Acklam-free approximation of the normal quantile (good to 1e-3, enough for a synthetic shape).
  const t = Math.sqrt(-2 * Math.log(Math.min(p, 1 - p)));
  const z =
    t -
    (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t ** 3);
  return median * Math.exp(sigma * (p < 0.5 ? -z : z));
}

/** Every runner's `--summary-trend-stats`, in the flag's order. */
const STATS = summaryTrendStats(thresholdPercentiles(parseThresholds(THRESHOLDS))).split(',');
/** The percentiles every runner reports, in the order of its `--summary-trend-stats` flag. */
const PERCENTS = STATS.flatMap((stat) => {
  const m = /^p\((.+)\)$/.exec(stat);
  return m ? [Number(m[1])] : [];
});

/** One runner's `--summary-export` JSON (k6 writes it indented by 4 spaces). */
function runnerSummary(index: number): string {
  const metrics: Record<string, Record<string, number>> = {};
  const slow = 1 + (index % 7) * 0.15;
  TRENDS.forEach((name, t) => {
    const median = (5 + t * 3) * slow;
    const count = 20_000 + ((index * 7919 + t * 104729) % 5000);
    const values: Record<string, number> = {
      count,
      min: median / 10,
      max: median * 40,
      avg: median * 1.2,
      med: median,
    };
    for (const p of PERCENTS) values[percentileKey(p)] = lognormalAt(median, 0.6, p / 100);
    metrics[name] = values;
  });
  for (const name of ['http_reqs', 'iterations', 'data_received', 'data_sent']) {
    metrics[name] = { count: 60_000 + index, rate: 1000 + index / 60 };
  }
  metrics.http_req_failed = { passes: 12, fails: 59_988, value: 0.0002 };
  metrics.checks = { passes: 119_000, fails: 1000, value: 0.99 };
  metrics.vus = { value: 10, min: 1, max: 10 };
  metrics.vus_max = { value: 10, min: 10, max: 10 };
  const checks = (prefix: string) =>
    Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [
        `${prefix} check ${i}`,
        { name: `${prefix} check ${i}`, path: `::${prefix}::${prefix} check ${i}`, passes: 5950, fails: 50 },
      ]),
    );
  const rootGroup = {
    name: '',
    path: '',
    checks: {},
    groups: {
      browse: { name: 'browse', path: '::browse', checks: checks('browse'), groups: {} },
      buy: { name: 'buy', path: '::buy', checks: checks('buy'), groups: {} },
    },
  };
  return JSON.stringify({ metrics, root_group: rootGroup }, null, 4);
}

/** k6/encoding's b64encode, in Node. */
const nodeB64 = (buffer: ArrayBuffer) => Buffer.from(buffer).toString('base64');

/** The same runner's compact summary, as its entry module's handleSummary writes it. */
function compactRunnerSummary(exported: string): string {
  const doc = JSON.parse(exported) as {
    metrics: Record<string, Record<string, number>>;
    root_group: unknown;
  };
  const type = (v: Record<string, number>) =>
    'avg' in v ? 'trend' : 'passes' in v ? 'rate' : 'rate' in v ? 'counter' : 'gauge';
  return compactSummary(
    {
      metrics: Object.fromEntries(
        Object.entries(doc.metrics).map(([name, values]) => [
          name,
          { type: type(values), contains: 'default', values },
        ]),
      ),
      root_group: doc.root_group,
      options: { summaryTrendStats: STATS },
    },
    nodeB64,
  );
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const thresholds = parseThresholds(THRESHOLDS);
const rows: Array<{
  runners: number;
  parseMs: number;
  aggregateMs: number;
  thresholdsMs: number;
  renderMs: number;
  totalMs: number;
  cpuMs: number;
  /** Parsing k6's own --summary-export instead (the fallback), ms. */
  exportParseMs: number;
}> = [];
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (const n of [1, 10, 100, 1000]) {
  const exports = Array.from({ length: n }, (_, i) => runnerSummary(i));
  const texts = exports.map(compactRunnerSummary);
  const repeats = n >= 1000 ? 3 : n >= 100 ? 5 : 20;
  const samples: Array<[number, number, number, number, number]> = [];
  const exportSamples: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const e0 = performance.now();
    exports.map(parseRunnerSummary);
    exportSamples.push(performance.now() - e0);
    const c0 = cpuMs();
    const t0 = performance.now();
    const summaries = texts.map(parseRunnerSummary);
    const t1 = performance.now();
    const metrics = aggregateSummaries(summaries, {
      durationS: 60,
      percentiles: thresholdPercentiles(thresholds),
    });
    const t2 = performance.now();
    const judged = evaluateThresholds(thresholds, metrics);
    const t3 = performance.now();
    const result: RunResult = {
      schema: RESULT_SCHEMA,
      verdict: 'passed',
      failures: [],
      thresholdsOk: judged.every((t) => t.ok),
      script: 'bench.js',
      environment: { backend: 'local', k6Version: 'v2.2.0', runners: n, scriptHash: '0'.repeat(64) },
      startedAt: new Date(0).toISOString(),
      endedAt: new Date(60_000).toISOString(),
      durationS: 60,
      startSkewMs: 0,
      metrics,
      rootGroup: summaries[0]!.rootGroup,
      thresholds: judged,
      runners: Array.from({ length: n }, (_, i) => ({
        index: i,
        segment: `${i}/${n}:${i + 1}/${n}`,
        exitCode: 0,
        exit: 'completed',
        ok: true,
        startOffsetMs: 0,
      })),
    };
    renderReport(result);
    const t4 = performance.now();
    samples.push([t1 - t0, t2 - t1, t3 - t2, t4 - t3, cpuMs() - c0]);
  }
  const [parseMs, aggregateMs, thresholdsMs, renderMs, cpu] = [0, 1, 2, 3, 4].map((k) =>
    median(samples.map((s) => s[k]!)),
  );
  const row = {
    runners: n,
    parseMs: parseMs!,
    aggregateMs: aggregateMs!,
    thresholdsMs: thresholdsMs!,
    renderMs: renderMs!,
    totalMs: parseMs! + aggregateMs! + thresholdsMs! + renderMs!,
    cpuMs: cpu!,
    exportParseMs: median(exportSamples),
  };
  rows.push(row);
  console.log(
    `${String(n).padStart(5)} runners: parse ${row.parseMs.toFixed(1)} ms, aggregate ${row.aggregateMs.toFixed(1)} ms, thresholds ${row.thresholdsMs.toFixed(2)} ms, render ${row.renderMs.toFixed(1)} ms, total ${row.totalMs.toFixed(1)} ms (CPU ${row.cpuMs.toFixed(1)} ms); parsing k6's export instead: ${row.exportParseMs.toFixed(1)} ms`,
  );
}

const md = [
  '# Scale: parse + aggregate + thresholds + render',
  '',
  `Synthetic runner summaries: ${TRENDS.length} trends (submetrics included) × ${QUANTILE_GRID.length} grid percentiles, 20 checks, ${thresholds.length} thresholds. Summaries as runners write them: the compact summary of the entry module's handleSummary, ${Math.round(compactRunnerSummary(runnerSummary(0)).length / 1024)} KiB each ("parse"); k6's own \`--summary-export\` of the same data (keys in the flag's order, indented, ${Math.round(runnerSummary(0).length / 1024)} KiB, the fallback) is timed in the last column. Median of repeated runs, ms of wall time per stage; "CPU" is the process CPU time of the whole pass (the machine is shared by other jobs: wall times include their load; \`uptime\` load average when measured: ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores). Target: < 100 ms at 100 runners, < 1 s at 1,000.`,
  '',
  '| runners | parse | aggregate | thresholds | render | total | CPU | parse of k6 export |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.runners} | ${r.parseMs.toFixed(1)} | ${r.aggregateMs.toFixed(1)} | ${r.thresholdsMs.toFixed(2)} | ${r.renderMs.toFixed(1)} | ${r.totalMs.toFixed(1)} | ${r.cpuMs.toFixed(1)} | ${r.exportParseMs.toFixed(1)} |`,
  ),
  '',
].join('\n');
await writeFile(
  path.join(RESULTS, 'scale.json'),
  `${JSON.stringify({ grid: QUANTILE_GRID.length, trends: TRENDS.length, rows }, null, 2)}\n`,
);
await writeFile(path.join(RESULTS, 'scale.md'), md);
