// The PR verdict on real runs: real product runs (2 local runners, real k6) against a local target
// whose service time is exponential with a mean of 4 ms × FACTOR, then every ordered pair of runs
// judged by the report's own `judge` (default gate and tolerances, one stored baseline, no history).
// Prints and writes bench/results/calibration.{json,md}: the share of A/A pairs judged regressed
// and inconclusive, the share of +10% and +20% pairs caught, and what saturated runs are judged.
// Usage: node bench/calibration.ts [runs per cell, default 6]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../src/compare/judgement.ts';
import { startNodeTarget } from '../src/demo/target.ts';
import { judge } from '../src/pr-comment/judge.ts';
import type { RunResult } from '../src/result/schema.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = Number(process.argv[2] ?? 6);
const work = mkdtempSync(path.join(os.tmpdir(), 'k6d-calibration-'));

const script = (maxVUs: number) => `
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 100, timeUnit: '1s',
  duration: '5s', preAllocatedVUs: ${Math.min(20, maxVUs)}, maxVUs: ${maxVUs} } } };
const F = Number(__ENV.FACTOR);
export default function () {
  const ms = Math.round(-Math.log(1 - Math.random()) * 4 * F);
  http.get(__ENV.TARGET + '/slow?ms=' + ms);
}
`;

const target = await startNodeTarget();
let n = 0;
// Asynchronous: the target answers from this process, so a synchronous child would block it.
async function run(factor: number, maxVUs = 40): Promise<RunResult> {
  const file = path.join(work, `s${maxVUs}.js`);
  writeFileSync(file, script(maxVUs));
  const out = path.join(work, `r${n++}.json`);
  try {
    await promisify(execFile)(process.execPath, [
      path.join(ROOT, 'src/cli/bin.ts'),
      'run',
      file,
      '-n',
      '2',
      '-o',
      out,
      '--no-html',
      '--',
      '-e',
      `TARGET=${target.url}`,
      '-e',
      `FACTOR=${factor}`,
    ]);
  } catch {
    // a failed threshold or a saturated run still writes its result
  }
  return JSON.parse(readFileSync(out, 'utf8')) as RunResult;
}

function verdict(base: RunResult, head: RunResult): string {
  return judge({
    head,
    base,
    baseline: { source: 'file', state: 'found' },
    options: { key: 'default', gate: DEFAULT_GATE, tolerances: DEFAULT_TOLERANCES },
    links: {},
  }).verdict;
}

const cells: Record<string, RunResult[]> = { '1.00': [], '1.10': [], '1.20': [], saturated: [] };
for (let i = 0; i < RUNS; i++) {
  // Alternated, so that the machine's drift reaches every cell alike.
  cells['1.00']!.push(await run(1));
  cells['1.10']!.push(await run(1.1));
  cells['1.20']!.push(await run(1.2));
  if (i < Math.ceil(RUNS / 2)) cells.saturated!.push(await run(1, 2));
}
await target.stop();
rmSync(work, { recursive: true, force: true });

const count = (pairs: Array<[RunResult, RunResult]>) => {
  const by: Record<string, number> = {};
  for (const [b, h] of pairs) {
    const v = verdict(b, h);
    by[v] = (by[v] ?? 0) + 1;
  }
  return { pairs: pairs.length, ...by };
};
const aa = cells['1.00']!;
const rows = {
  'A/A (every ordered pair of 1.00 runs)': count(
    aa.flatMap((b, i) => aa.filter((_, j) => j !== i).map((h) => [b, h] as [RunResult, RunResult])),
  ),
  '+10% (1.00 baseline, 1.10 head)': count(
    aa.flatMap((b) => cells['1.10']!.map((h) => [b, h] as [RunResult, RunResult])),
  ),
  '+20% (1.00 baseline, 1.20 head)': count(
    aa.flatMap((b) => cells['1.20']!.map((h) => [b, h] as [RunResult, RunResult])),
  ),
  'saturated head (maxVUs 2)': count(
    aa.flatMap((b) => cells.saturated!.map((h) => [b, h] as [RunResult, RunResult])),
  ),
};
const requests = aa.map((r) => r.metrics.http_reqs?.values.count ?? 0);
const p95 = (r: RunResult) => r.metrics['http_req_duration{expected_response:true}']?.values['p(95)'];
const summary = {
  date: new Date().toISOString(),
  runsPerCell: RUNS,
  requestsPerSide: requests,
  saturatedRuns: cells.saturated!.map((r) => r.loadGenerator?.saturated ?? false),
  p95ByCell: Object.fromEntries(
    Object.entries(cells).map(([k, rs]) => [k, rs.map((r) => Number(p95(r)?.toFixed(2)))]),
  ),
  verdicts: rows,
};
console.log(JSON.stringify(summary, null, 2));
writeFileSync(path.join(ROOT, 'bench/results/calibration.json'), `${JSON.stringify(summary, null, 2)}\n`);
const md = [
  `# PR verdict on real runs (${summary.date})`,
  '',
  `\`node bench/calibration.ts ${RUNS}\`: ${RUNS} runs per cell of 5 s at 100 req/s, 2 local runners, exponential service time (mean 4 ms × factor); every pair judged by \`judge\` (default gate and tolerances, one stored baseline, no history). Requests per side: ${requests.join(', ')}.`,
  '',
  '| comparison | pairs | verdicts |',
  '| --- | ---: | --- |',
  ...Object.entries(rows).map(
    ([k, v]) =>
      `| ${k} | ${v.pairs} | ${Object.entries(v)
        .filter(([x]) => x !== 'pairs')
        .map(([x, c]) => `${x} ${c}`)
        .join(', ')} |`,
  ),
  '',
].join('\n');
writeFileSync(path.join(ROOT, 'bench/results/calibration.md'), md);
