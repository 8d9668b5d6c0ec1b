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
 *   npm run bench:scale                       (SCALE_RUNNERS=10,100,1000 SCALE_PROCESSES=7)
 *   SCALE_BASELINE=/tmp/base npm run bench:scale   (beside another checkout, alternated)
 *   node bench/scale.ts --summaries <dir> <n>  (write the summaries only, to profile one pass:
 *     node --cpu-prof bench/scale-pass.ts <dir> <n> '<thresholds>'; its marksNs cut the profile by stage)
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compactSummary } from '../src/k6/compact-summary.ts';
import { thresholdPercentiles } from '../src/k6/thresholds.ts';
import { parseThresholds, percentileKey } from '../src/k6/thresholds-parser.ts';
import { QUANTILE_GRID } from '../src/result/quantile-grid.ts';
import { summaryTrendStats } from '../src/run/plan.ts';
import { fmt, type ScaleFigures, type ScaleRow, type Spread, scaleReport } from './scale-report.ts';

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

/** The stages one pass times, in order. */
const STAGES = ['collect', 'assemble', 'write', 'markdown', 'html'] as const;
type Stage = (typeof STAGES)[number];
const PROCESSES = Number(process.env.SCALE_PROCESSES ?? 7);
const COUNTS = (process.env.SCALE_RUNNERS ?? '10,100,1000').split(',').map(Number);
/**
 * Another checkout to time beside this one, in alternated processes (e.g. `git worktree add
 * /tmp/base ff33269` with its node_modules linked): its summaries are written by its own
 * `bench/scale.ts --summaries` (its own format), its code timed by this scale-pass.ts.
 */
const BASELINE = process.env.SCALE_BASELINE;

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
  stages: Record<Stage, number>;
  cpuStages: Record<Stage, number>;
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

const spread = (xs: number[]): Spread => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

/** Average size of the summaries in `dir`, KiB. */
function averageKiB(dir: string, n: number): number {
  let bytes = 0;
  for (let i = 0; i < n; i++) bytes += statSync(path.join(dir, `runner-${i}-summary.k6d.json`)).size;
  return bytes / n / 1024;
}

const pass = (dir: string, n: number, checkout?: string): PassFigures =>
  JSON.parse(
    execFileSync(
      process.execPath,
      [
        path.join(import.meta.dirname, 'scale-pass.ts'),
        dir,
        String(n),
        JSON.stringify(THRESHOLDS),
        ...(checkout ? [checkout] : []),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    ),
  ) as PassFigures;

const rows: ScaleRow[] = [];
const loadBefore = os.loadavg()[0]!;
const root = await mkdtemp(path.join(os.tmpdir(), 'k6d-bench-scale-'));
try {
  for (const n of COUNTS) {
    const dirs = { this: path.join(root, `${n}-this`), baseline: path.join(root, `${n}-baseline`) };
    await mkdir(dirs.this, { recursive: true });
    await writeSummaries(dirs.this, n);
    if (BASELINE) {
      execFileSync(
        process.execPath,
        [path.join(BASELINE, 'bench/scale.ts'), '--summaries', dirs.baseline, String(n)],
        {
          cwd: BASELINE,
        },
      );
    }
    const codes = BASELINE ? (['this', 'baseline'] as const) : (['this'] as const);
    const passes: Record<string, PassFigures[]> = { this: [], baseline: [] };
    for (let p = 0; p < PROCESSES; p++) {
      // Alternated, and which goes first alternates too: the machine's load drifts.
      for (const code of p % 2 === 0 ? codes : [...codes].reverse()) {
        passes[code]!.push(pass(dirs[code], n, code === 'baseline' ? BASELINE : undefined));
      }
    }
    for (const code of codes) {
      const xs = passes[code]!;
      const row: ScaleRow = {
        code,
        runners: n,
        processes: PROCESSES,
        summaryKiB: averageKiB(dirs[code], n),
        totalMs: spread(xs.map((x) => x.totalMs)),
        cpuMs: spread(xs.map((x) => x.cpuMs)),
        stages: Object.fromEntries(STAGES.map((s) => [s, spread(xs.map((x) => x.stages[s]))])),
        cpuStages: Object.fromEntries(STAGES.map((s) => [s, spread(xs.map((x) => x.cpuStages[s]))])),
      };
      rows.push(row);
      console.log(
        `${String(n).padStart(5)} runners ${code.padEnd(8)}: ${fmt(row.totalMs)} ms, CPU ${fmt(row.cpuMs)} ms; ${STAGES.map((s) => `${s} ${row.stages[s]!.median.toFixed(0)}/${row.cpuStages[s]!.median.toFixed(0)}`).join(', ')}`,
      );
    }
    await rm(dirs.this, { recursive: true, force: true });
    await rm(dirs.baseline, { recursive: true, force: true });
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
const loadAfter = os.loadavg()[0]!;

/** A checkout's commit (short), or its folder's name when it is no git checkout (a `git archive`). */
function commitOf(dir: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  } catch {
    return path.basename(dir);
  }
}
const figures: ScaleFigures = {
  date: new Date().toISOString(),
  commit: commitOf(import.meta.dirname),
  ...(BASELINE ? { baseline: commitOf(BASELINE) } : {}),
  grid: QUANTILE_GRID.length,
  trends: TRENDS.length,
  thresholds: thresholds.length,
  cores: os.cpus().length,
  processes: PROCESSES,
  loadAverage: { start: loadBefore, end: loadAfter },
  stages: [...STAGES],
  rows,
};
const md = scaleReport(figures);
await writeFile(path.join(RESULTS, 'scale.json'), `${JSON.stringify(figures, null, 2)}\n`);
await writeFile(path.join(RESULTS, 'scale.md'), md);
console.log(md);
