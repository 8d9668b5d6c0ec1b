/**
 * Chooses the runners' quantile grid offline, on real traffic: replays the raw samples that
 * `BENCH_SAMPLES=file npm run bench:percentiles` kept (every run's `http_req_duration` by runner),
 * computes each runner's grid from its own samples exactly as k6 does (`TrendSink.P`, see
 * `exactPercentile`), merges the grids with `mergePercentiles` and compares the merged p50..p99.99
 * with the exact percentile of all samples, for several candidate grids. Prints the figures and
 * writes bench/results/grid.{json,md}.
 *
 *   BENCH_SAMPLES=/tmp/samples.json npm run bench:percentiles && node bench/grid.ts /tmp/samples.json [more.json…]
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { percentsAround, QUANTILE_GRID, REPORTED_PERCENTILES } from '../src/result/quantile-grid.ts';
import { exactPercentile, mergePercentiles, type QuantileGrid } from '../src/result/quantiles.ts';

const RESULTS = path.join(import.meta.dirname, 'results');

/** A grid: body percents, then a tail geometric in (1 − p) with `ratio` from q = 50% down to 0.001%. */
function candidate(body: number[], ratio: number): number[] {
  const grid = new Set<number>(body);
  for (let q = 50 * ratio; q >= 0.001; q *= ratio)
    grid.add(Number((100 - Number(q.toPrecision(3))).toFixed(6)));
  for (const p of REPORTED_PERCENTILES) for (const k of percentsAround(p)) grid.add(k);
  return [...grid].sort((a, b) => a - b);
}

const range = (from: number, to: number, step: number) =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => Number((from + i * step).toFixed(6)));
const low = [0.1, 0.5, 1, 2.5];

const CANDIDATES: Record<string, number[]> = {
  'QUANTILE_GRID (chosen)': [...QUANTILE_GRID],
  'the previous grid (body to p50, ratio 0.9)': candidate(
    [...low, ...range(5, 40, 5), 42, 44, 46, 48, 50],
    0.9,
  ),
  'tail ratio 0.93': candidate([...low, ...range(5, 40, 5), 42, 44, 46, 48, 50], 0.93),
  'body every 1 pt p40-p90, ratio 0.93': candidate([...low, ...range(5, 40, 5), ...range(41, 90, 1)], 0.93),
  'body every 1 pt p20-p90, ratio 0.95': candidate([...low, 5, 10, 15, ...range(20, 90, 1)], 0.95),
  'body every 2 pt p10-p90, ratio 0.95': candidate([...low, 5, ...range(10, 90, 2)], 0.95),
  'body every 0.5 pt p40-p90, ratio 0.95': candidate(
    [...low, ...range(5, 40, 5), ...range(40.5, 90, 0.5)],
    0.95,
  ),
  'body every 0.5 pt p20-p90, ratio 0.97': candidate([...low, 5, 10, 15, ...range(20, 90, 0.5)], 0.97),
  'body every 0.25 pt p20-p90, ratio 0.98': candidate([...low, 5, 10, 15, ...range(20, 90, 0.25)], 0.98),
  'body every 0.25 pt p2-p90, ratio 0.98': candidate([0.1, 0.5, 1, 1.5, ...range(2, 90, 0.25)], 0.98),
  'body every 0.25 pt p1-p90, ratio 0.98': candidate([0.1, 0.25, 0.5, 0.75, ...range(1, 90, 0.25)], 0.98),
  'body every 0.5 pt p1-p20, 0.25 to p90, ratio 0.98': candidate(
    [0.1, 0.25, 0.5, 0.75, ...range(1, 20, 0.5), ...range(20, 90, 0.25)],
    0.98,
  ),
  'body every 0.1 pt p20-p95, ratio 0.98': candidate([...low, 5, 10, 15, ...range(20, 95, 0.1)], 0.98),
};

interface Run {
  shape: string;
  runners: number;
  perRunner: number[][];
}

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: node bench/grid.ts <samples.json from BENCH_SAMPLES>...');
const runs = (
  await Promise.all(files.map(async (f) => JSON.parse(await readFile(f, 'utf8')) as Run[]))
).flat();
for (const r of runs) for (const s of r.perRunner) s.sort((a, b) => a - b);

const rows = Object.entries(CANDIDATES).map(([name, grid]) => {
  let valueMisses = 0;
  let tailMisses = 0;
  let rankMisses = 0;
  let worstBody = 0;
  let worstTail = 0;
  const cells: string[] = [];
  for (const run of runs) {
    const all = run.perRunner.flat().sort((a, b) => a - b);
    const grids: QuantileGrid[] = run.perRunner.map((s) => ({
      count: s.length,
      min: s[0]!,
      max: s.at(-1)!,
      points: grid.map((p): [number, number] => [p / 100, exactPercentile(s, p)]),
    }));
    const merged = mergePercentiles(grids, REPORTED_PERCENTILES);
    REPORTED_PERCENTILES.forEach((p, i) => {
      const truth = exactPercentile(all, p);
      const err = (100 * Math.abs(merged[i]! - truth)) / truth;
      const inRank =
        merged[i]! >= exactPercentile(all, p - 0.02) &&
        merged[i]! <= exactPercentile(all, Math.min(100, p + 0.02));
      if (!inRank) rankMisses++;
      if (p < 99.99) {
        worstBody = Math.max(worstBody, err);
        if (err > 0.3) {
          valueMisses++;
          cells.push(`${run.shape} N=${run.runners} p${p} ${err.toFixed(2)}%${inRank ? '' : ' rank✗'}`);
        }
      } else {
        worstTail = Math.max(worstTail, err);
        if (err > 2) tailMisses++;
      }
    });
  }
  return { name, points: grid.length, valueMisses, tailMisses, rankMisses, worstBody, worstTail, cells };
});

const cellsPerRow = runs.length * REPORTED_PERCENTILES.length;
const md = [
  `# Quantile grids replayed on real traffic (${runs.length} runs from ${files.length} runs of bench/percentiles, ${cellsPerRow} cells)`,
  '',
  `Samples: ${files.map((f) => path.basename(f)).join(', ')}${process.env.BENCH_NOTE ? ` (${process.env.BENCH_NOTE})` : ''}. Each runner grid computed from its own raw samples as k6 does, merged with \`mergePercentiles\` (the current merge, for every grid). Targets: p50..p99.9 within 0.3%, p99.99 within 2%, rank within ±0.02 points.`,
  '',
  '| grid | points | cells > 0.3% (p50..p99.9) | p99.99 > 2% | rank misses | worst p50..p99.9 | worst p99.99 |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.points} | ${r.valueMisses} | ${r.tailMisses} | ${r.rankMisses} of ${cellsPerRow} | ${r.worstBody.toFixed(2)}% | ${r.worstTail.toFixed(2)}% |`,
  ),
  '',
  ...rows.flatMap((r) => [`Cells over 0.3% with ${r.name}: ${r.cells.join('; ') || 'none'}`, '']),
].join('\n');
console.log(md);
await writeFile(path.join(RESULTS, 'grid.md'), md);
await writeFile(
  path.join(RESULTS, 'grid.json'),
  `${JSON.stringify({ at: new Date().toISOString(), sources: files.map((f) => path.basename(f)), rows }, null, 2)}\n`,
);
