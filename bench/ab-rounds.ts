// A/B rounds on real runs: the real CLI (`k6-distributed ab`, 2 local runners, real k6) against a
// local target whose service time is exponential with a mean of 4 ms × FACTOR, A at FACTOR 1 and
// B at 1.00 (A/A), 1.10, 1.20, or 1.00 with a load generator made to saturate (B's maxVUs 2). Each
// trial is K = 6 rounds (A B B A A B) of ROUND s (default 4) at 100 requests/s; its verdict is the paired one
// (src/compare/paired.ts) at the default 95% level, tolerances and gate. A smoke-size measurement
// of the mode (a few trials per cell), not the calibration (bench/calibration*.ts).
// Prints and writes bench/results/ab-rounds-<ROUND>s.{json,md}.
// Usage: node bench/ab-rounds.ts [trials per cell, default 3] [ROUND: seconds per round, default 4]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startNodeTarget } from '../src/demo/target.ts';
import type { AbResult } from '../src/result/ab-schema.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const TRIALS = Number(process.argv[2] ?? 3);
const K = 6;
const ROUND_S = Number(process.argv[3] ?? 4);
const work = mkdtempSync(path.join(os.tmpdir(), 'k6d-ab-bench-'));

const SCRIPT = `
import http from 'k6/http';
const MAX = Number(__ENV.MAXVUS || 40);
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 100, timeUnit: '1s',
  duration: '${ROUND_S}s', preAllocatedVUs: Math.min(20, MAX), maxVUs: MAX } } };
const F = Number(__ENV.FACTOR);
export default function () {
  const ms = Math.round(-Math.log(1 - Math.random()) * 4 * F);
  http.get(__ENV.TARGET + '/slow?ms=' + ms);
}
`;
const script = path.join(work, 'ab.js');
writeFileSync(script, SCRIPT);

const target = await startNodeTarget();
let n = 0;
/** One trial: K rounds, A at FACTOR 1, B as given. */
async function trial(b: string[]): Promise<AbResult> {
  const out = path.join(work, `ab${n++}.json`);
  try {
    // Asynchronous: the target answers from this process, so a synchronous child would block it.
    await promisify(execFile)(process.execPath, [
      path.join(ROOT, 'src/cli/bin.ts'),
      'ab',
      script,
      '--rounds',
      String(K),
      '-n',
      '2',
      '-o',
      out,
      '--a-env',
      'FACTOR=1',
      '--a-env',
      'SIDE=a',
      ...b.flatMap((e) => ['--b-env', e]),
      '--b-env',
      'SIDE=b',
      '--',
      '-e',
      `TARGET=${target.url}`,
    ]);
  } catch {
    // exit 1: regressed; the result is written all the same
  }
  return JSON.parse(readFileSync(out, 'utf8')) as AbResult;
}

const CELLS: Record<string, string[]> = {
  'A/A (1.00)': ['FACTOR=1'],
  '+10% (1.10)': ['FACTOR=1.1'],
  '+20% (1.20)': ['FACTOR=1.2'],
  'saturated B (maxVUs 2)': ['FACTOR=1', 'MAXVUS=2'],
};
const results: Record<string, AbResult[]> = Object.fromEntries(Object.keys(CELLS).map((c) => [c, []]));
for (let i = 0; i < TRIALS; i++) {
  // Alternated, so that the machine's drift reaches every cell alike.
  for (const [cell, b] of Object.entries(CELLS)) {
    const ab = await trial(b);
    results[cell]!.push(ab);
    const p95 = ab.paired.metrics.find((m) => m.id === 'p95')!;
    const range = p95.low === undefined ? '' : ` [${p95.low.toFixed(3)}, ${p95.high!.toFixed(3)}]`;
    console.log(`${cell} #${i + 1}: ${ab.paired.verdict}; p95 B/A median ${p95.median?.toFixed(3)}${range}`);
  }
}
await target.stop();
rmSync(work, { recursive: true, force: true });

const rows = Object.entries(results).map(([cell, list]) => {
  const count = (v: string) => list.filter((r) => r.paired.verdict === v).length;
  const p95 = list.map((r) => r.paired.metrics.find((m) => m.id === 'p95')!);
  const requests = list.flatMap((r) => r.rounds.map((x) => x.figures.requests ?? 0));
  return {
    cell,
    trials: list.length,
    regressed: count('regressed'),
    noRegression: count('no regression'),
    inconclusive: count('inconclusive'),
    p95Medians: p95.map((m) => Number(m.median?.toFixed(3))),
    p95Intervals: p95.map((m) =>
      m.low === undefined ? null : [Number(m.low.toFixed(3)), Number(m.high!.toFixed(3))],
    ),
    requestsPerRound: Math.round(requests.reduce((s, x) => s + x, 0) / requests.length),
  };
});
const md = [
  '# A/B rounds on real runs',
  '',
  `\`node bench/ab-rounds.ts ${TRIALS} ${ROUND_S}\`: ${TRIALS} trials per cell, each K = ${K} rounds (ABBA) of ${ROUND_S} s at 100 requests/s on 2 local runners,`,
  'target service time exponential, mean 4 ms × FACTOR; paired verdict at 95%, default tolerances and gate.',
  `Requests per side per trial: about ${(rows[0]!.requestsPerRound * K) / 2}.`,
  '',
  '| Cell | Trials | Regressed | No regression | Inconclusive | p95 B/A median per trial | Requests per round |',
  '|---|---:|---:|---:|---:|---|---:|',
  ...rows.map(
    (r) =>
      `| ${r.cell} | ${r.trials} | ${r.regressed} | ${r.noRegression} | ${r.inconclusive} | ${r.p95Medians.join(', ')} | ${r.requestsPerRound} |`,
  ),
  '',
].join('\n');
console.log(`\n${md}`);
const name = `bench/results/ab-rounds-${ROUND_S}s`;
writeFileSync(
  path.join(ROOT, `${name}.json`),
  `${JSON.stringify({ trials: TRIALS, rounds: K, roundS: ROUND_S, rows }, null, 2)}\n`,
);
writeFileSync(path.join(ROOT, `${name}.md`), md);
