/**
 * Scale benchmark of the whole post-run path, as a real run does it once: read and parse the
 * runners' summaries (collectAll), aggregate, judge the thresholds, merge the groups, make the
 * handleSummary data and build the result (assembleResult), write the result JSON, render the
 * markdown report and write the HTML report. Exactly one cold pass per fresh Node process (the JIT
 * as cold as after a real run's start), several processes per runner count; the median and the
 * spread (min–max) of those. Runners write the compact summary (`compactSummary`,
 * src/k6/compact-summary.ts), made here from the same data by the same function.
 * Each runner's summary looks like a real one: 9 built-in trends plus 5 custom ones, 6 trend
 * submetrics, counters, rates, gauges, 20 checks in two groups, every trend with the full
 * `--summary-trend-stats` grid (plan.ts), keys in that order and indented as k6 writes the file.
 * The machine is shared: besides the wall time, the process CPU time of the whole pass is reported,
 * which other processes disturb less. Prints the figures and writes bench/results/scale.{json,md}.
 *
 *   npm run bench:scale                       (SCALE_RUNNERS=10,100,1000 SCALE_PROCESSES=5)
 *   node bench/scale.ts --summaries <dir> <n>  (write the summaries only, to profile one pass)
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compactSummary } from '../src/k6/compact-summary.ts';
import { thresholdPercentiles } from '../src/k6/thresholds.ts';
import { parseThresholds, percentileKey } from '../src/k6/thresholds-parser.ts';
import { QUANTILE_GRID } from '../src/result/quantile-grid.ts';
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

const thresholds = parseThresholds(THRESHOLDS);

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** The stages one pass times, in order (ms of wall time each). */
const STAGES = ['collect', 'assemble', 'write', 'markdown', 'html'] as const;
const PROCESSES = Number(process.env.SCALE_PROCESSES ?? 5);
const COUNTS = (process.env.SCALE_RUNNERS ?? '10,100,1000').split(',').map(Number);

/** A runner's log as k6 writes it with `--quiet` (a few lines; the collect reads its tail). */
const LOG = Array.from(
  { length: 40 },
  (_, i) =>
    `time="2026-11-25T19:00:${String(i).padStart(2, '0')}Z" level=info msg="line ${i}" source=console\n`,
).join('');

/** Writes `n` runners' compact summaries (varied copies) into `dir`, as local runners leave them. */
async function writeSummaries(dir: string, n: number): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const text = compactRunnerSummary(runnerSummary(i));
    bytes += text.length;
    await writeFile(path.join(dir, `runner-${i}-summary.k6d.json`), text);
    await writeFile(path.join(dir, `runner-${i}.log`), LOG);
  }
  return bytes / n;
}

interface PassFigures {
  stages: Record<(typeof STAGES)[number], number>;
  totalMs: number;
  cpuMs: number;
  /** Loading the modules (not part of the path: a real run has them loaded already). */
  importMs: number;
}

// `node bench/scale.ts --summaries <dir> <n>`: only write the summaries, for a profile of one pass
// (`node --cpu-prof bench/scale-pass.ts <dir> <n> '<thresholds>'`).
if (process.argv[2] === '--summaries') {
  await mkdir(process.argv[3]!, { recursive: true });
  await writeSummaries(process.argv[3]!, Number(process.argv[4]));
  console.log(JSON.stringify(THRESHOLDS));
  process.exit(0);
}

const rows: Array<{
  runners: number;
  processes: number;
  totalMs: { median: number; min: number; max: number };
  cpuMs: { median: number; min: number; max: number };
  stages: Record<string, number>;
}> = [];
const root = await mkdtemp(path.join(os.tmpdir(), 'k6d-bench-scale-'));
let summaryKiB = 0;
try {
  for (const n of COUNTS) {
    const dir = path.join(root, String(n));
    await mkdir(dir, { recursive: true });
    summaryKiB = (await writeSummaries(dir, n)) / 1024;
    const passes: PassFigures[] = [];
    for (let p = 0; p < PROCESSES; p++) {
      const out = execFileSync(
        process.execPath,
        [path.join(import.meta.dirname, 'scale-pass.ts'), dir, String(n), JSON.stringify(THRESHOLDS)],
        { encoding: 'utf8', maxBuffer: 1 << 26 },
      );
      passes.push(JSON.parse(out) as PassFigures);
    }
    const spread = (xs: number[]) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
    const row = {
      runners: n,
      processes: PROCESSES,
      totalMs: spread(passes.map((x) => x.totalMs)),
      cpuMs: spread(passes.map((x) => x.cpuMs)),
      stages: Object.fromEntries(STAGES.map((s) => [s, median(passes.map((x) => x.stages[s]))])),
    };
    rows.push(row);
    console.log(
      `${String(n).padStart(5)} runners: ${row.totalMs.median.toFixed(0)} ms (${row.totalMs.min.toFixed(0)}–${row.totalMs.max.toFixed(0)}), CPU ${row.cpuMs.median.toFixed(0)} ms; ${STAGES.map((s) => `${s} ${row.stages[s]!.toFixed(0)}`).join(', ')}`,
    );
    await rm(dir, { recursive: true, force: true });
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const fmt = (x: { median: number; min: number; max: number }) =>
  `${x.median.toFixed(0)} (${x.min.toFixed(0)}–${x.max.toFixed(0)})`;
const md = [
  '# Scale: the whole post-run path, one cold pass per process',
  '',
  `Measured ${new Date().toISOString()} with \`npm run bench:scale\` (bench/scale.ts, each pass in bench/scale-pass.ts). Each pass is a fresh Node process that runs the path once, as a real run does after its runners ended: read and parse every compact summary (collectAll), assembleResult (aggregate, thresholds, groups, handleSummary data, result), write the result JSON, render the markdown report (with charts), write the HTML report. Module loading is not counted (a real run has the modules loaded). Synthetic runner summaries shaped like real ones: ${TRENDS.length} trends (submetrics included) × ${QUANTILE_GRID.length} grid percentiles, 20 checks in 2 groups, ${thresholds.length} thresholds, ${Math.round(summaryKiB)} KiB each. ${PROCESSES} processes per row: median (min–max) of wall ms, and of the process CPU ms. Machine: ${os.cpus().length} cores shared with other jobs, load average ${os.loadavg()[0]!.toFixed(1)}. Target (issue 26): < 100 ms at 100 runners, < 1 s at 1,000.`,
  '',
  `| runners | total ms | CPU ms | ${STAGES.join(' | ')} |`,
  `| ---: | ---: | ---: | ${STAGES.map(() => '---:').join(' | ')} |`,
  ...rows.map(
    (r) =>
      `| ${r.runners} | ${fmt(r.totalMs)} | ${fmt(r.cpuMs)} | ${STAGES.map((s) => r.stages[s]!.toFixed(1)).join(' | ')} |`,
  ),
  '',
].join('\n');
await writeFile(
  path.join(RESULTS, 'scale.json'),
  `${JSON.stringify({ grid: QUANTILE_GRID.length, trends: TRENDS.length, processes: PROCESSES, rows }, null, 2)}\n`,
);
await writeFile(path.join(RESULTS, 'scale.md'), md);
console.log(md);
