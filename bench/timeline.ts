/**
 * Latency per interval against the truth: real local runs (real k6 runners against a real HTTP
 * target on 127.0.0.1) with `--out json` on every runner, and each interval's p50/p90/p95/p99 of
 * `timeline.latency` compared with k6's percentile of the raw samples whose time falls in that
 * interval. Prints the figures and writes bench/results/timeline.{json,md}.
 *
 *   npm run bench:timeline
 *
 * Cells: the issue's 60 s run (2 runners, 200 req/s, latency steps from 5–25 ms to 30–50 ms
 * halfway: 1 s intervals), and a 15 s run on 4 runners (0.25 s intervals, about 50 samples each).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalBackend } from '../src/backends/local/backend.ts';
import { median } from '../src/compare/noise.ts';
import { parseRunConfig } from '../src/config.ts';
import { startNodeTarget } from '../src/demo/target.ts';
import { type Logger, silentLogger } from '../src/log.ts';
import { runTest } from '../src/run/index.ts';
import { compareWithRaw, type IntervalComparison, STEP_SCRIPT } from '../test/support/raw-intervals.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const quiet: Logger = { ...silentLogger, warning: (m) => console.error(`  warning: ${m}`) };
const PS = ['p50', 'p90', 'p95', 'p99'] as const;
const TARGET_ERROR = 0.05;

interface Cell {
  name: string;
  runners: number;
  durationS: number;
  rate: number;
}

const CELLS: Cell[] = [
  { name: '60 s, 2 runners, 200 req/s', runners: 2, durationS: 60, rate: 200 },
  { name: '15 s, 4 runners, 200 req/s', runners: 4, durationS: 15, rate: 200 },
];

/** Per percentile: intervals compared, the largest and median |error|, and the share within 5%. */
function summarise(rows: IntervalComparison[], minSamples: number) {
  const used = rows.filter((r) => r.rawCount >= minSamples);
  return Object.fromEntries(
    PS.map((p) => {
      const errors = used.map((r) => Math.abs(r.p[p][2]));
      return [
        p,
        {
          intervals: used.length,
          maxError: Math.max(...errors),
          medianError: median(errors),
          within5: errors.filter((e) => e <= TARGET_ERROR).length / errors.length,
        },
      ];
    }),
  );
}

async function runCell(cell: Cell, targetUrl: string, dir: string) {
  const script = path.join(dir, 'script.js');
  await writeFile(script, STEP_SCRIPT);
  const raw = (i: number) => path.join(dir, `raw-${cell.runners}-${i}.json`);
  const config = parseRunConfig({
    script,
    runners: cell.runners,
    k6Args: [
      '-e',
      `TARGET=${targetUrl}`,
      '-e',
      `DURATION=${cell.durationS}s`,
      '-e',
      `RATE=${cell.rate}`,
      '--out',
      `json=${path.join(dir, `raw-${cell.runners}-{runner}.json`)}`,
    ],
    resultPath: path.join(dir, `result-${cell.runners}.json`),
  });
  const result = await runTest(config, {
    createBackend: (k6, work) => new LocalBackend(k6, work),
    log: quiet,
  });
  const latency = result.timeline?.latency;
  if (!latency) throw new Error(`${cell.name}: the result has no timeline.latency`);
  const files = Array.from({ length: cell.runners }, (_, i) => raw(i));
  const startedAtMs = Date.parse(result.startedAt);
  const all = compareWithRaw(
    latency,
    'http_req_duration{expected_response:true}',
    files,
    'http_req_duration',
    { expected_response: 'true' },
    startedAtMs,
  );
  const slow = compareWithRaw(
    latency,
    'http_req_duration{name:slow}',
    files,
    'http_req_duration',
    { name: 'slow' },
    startedAtMs,
  );
  const points = latency.metrics.find(
    (m) => m.metric === 'http_req_duration{expected_response:true}',
  )!.points;
  return {
    ...cell,
    intervalS: latency.intervalS,
    points: points.length,
    firstPointS: points[0]!.tS,
    counted: all.reduce((a, r) => a + r.ourCount, 0),
    rawSamples: all.reduce((a, r) => a + r.rawCount, 0),
    // Every interval with 20 samples or more (the first and last intervals are partial).
    expected: summarise(all, 20),
    thresholdSubmetric: summarise(slow, 20),
  };
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

function markdown(cells: Awaited<ReturnType<typeof runCell>>[], at: string): string {
  const lines = [
    '# Latency per interval against the raw samples',
    '',
    `Measured ${at} with \`npm run bench:timeline\` (bench/timeline.ts): real local runs, each runner also`,
    "writing `--out json`; every interval's percentile of `timeline.latency` against k6's percentile of the",
    'raw samples whose time falls in the same interval. Target: within ±5% (issue 26). Intervals with 20',
    'samples or more; latency steps from 5–25 ms to 30–50 ms halfway.',
    '',
    '| run | series | interval | points | p | intervals | max error | median error | within 5% |',
    '|---|---|---:|---:|---|---:|---:|---:|---:|',
  ];
  for (const c of cells) {
    for (const [series, s] of [
      ['http_req_duration{expected_response:true}', c.expected],
      ['http_req_duration{name:slow}', c.thresholdSubmetric],
    ] as const) {
      for (const p of PS) {
        const f = s[p]!;
        lines.push(
          `| ${c.name} | \`${series}\` | ${c.intervalS} s | ${c.points} | ${p} | ${f.intervals} | ${pct(f.maxError)} | ${pct(f.medianError)} | ${pct(f.within5)} |`,
        );
      }
    }
  }
  lines.push(
    '',
    ...cells.map(
      (c) =>
        `- ${c.name}: ${c.counted} samples counted in the series against ${c.rawSamples} raw ones; first point at ${c.firstPointS} s.`,
    ),
    '',
  );
  return lines.join('\n');
}

async function main() {
  const dir = path.join(os.tmpdir(), `k6d-bench-timeline-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const target = await startNodeTarget();
  const cells = [];
  try {
    for (const cell of CELLS) {
      console.error(`${cell.name} ...`);
      cells.push(await runCell(cell, target.url, dir));
    }
  } finally {
    await target.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const at = new Date().toISOString();
  await mkdir(RESULTS, { recursive: true });
  await writeFile(path.join(RESULTS, 'timeline.json'), `${JSON.stringify({ at, cells }, null, 2)}\n`);
  const md = markdown(cells, at);
  await writeFile(path.join(RESULTS, 'timeline.md'), md);
  console.log(md);
}

await main();
