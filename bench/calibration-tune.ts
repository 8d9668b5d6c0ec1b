// Tunes the verdict's default between-run noise (DEFAULT_BETWEEN_RUN_NOISE, src/compare/significance.ts)
// on the real runs a calibration made: every ordered pair of a shape's ×1.00 runs (A/A) and every
// (×1.00, ×F) pair is judged by the product's own `judge` with one stored baseline and no history,
// once per candidate latency floor τ (p50/p90/p95 relative sd; p99 gets 1.5 τ). Prints, per τ and
// shape, the share of A/A pairs judged regressed and inconclusive and the share of each ×F caught,
// and writes bench/results/calibration-tune.{json,md}.
// Usage: node bench/calibration-tune.ts <data folder | bench/results/calibration-runs.json>
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../src/compare/judgement.ts';
import { DEFAULT_VERDICT_MODEL, type VerdictModel } from '../src/compare/significance.ts';
import { type CommentData, judge } from '../src/compare/verdict.ts';
import type { RunResult } from '../src/result/schema.ts';
import { loadRuns, requestsOf } from './calibration/runs.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const where = process.argv[2];
if (!where) throw new Error('usage: node bench/calibration-tune.ts <data folder | runs file>');
const runs = loadRuns(where).filter((r) => r.result.uncertainty !== undefined);
const TAUS = [0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15];

function model(tau: number): VerdictModel {
  const floors = { ...DEFAULT_VERDICT_MODEL.betweenRunNoise };
  for (const id of ['p50', 'p90', 'p95'] as const) floors[id] = { relative: tau, absolute: 0 };
  floors.p99 = { relative: 1.5 * tau, absolute: 0 };
  return { ...DEFAULT_VERDICT_MODEL, betweenRunNoise: floors };
}

function verdict(base: RunResult, head: RunResult, m: VerdictModel): string {
  const input: CommentData = {
    head,
    base,
    baseline: { source: 'file', state: 'found' } as CommentData['baseline'],
    options: { key: 'default', gate: DEFAULT_GATE, tolerances: DEFAULT_TOLERANCES },
    links: {},
  };
  return judge(input, m).verdict;
}

interface Cell {
  shape: string;
  tau: number;
  kind: string;
  pairs: number;
  regressed: number;
  inconclusive: number;
  requestsPerSide: number;
}
const out: Cell[] = [];
const shapes = [...new Set(runs.map((r) => r.shape))].filter((s) => s !== 'saturated');
for (const shape of shapes) {
  const cell = (f: number) => runs.filter((r) => r.shape === shape && r.factor === f && !r.saturated);
  const a = cell(1);
  const factors = [...new Set(runs.filter((r) => r.shape === shape).map((r) => r.factor))].sort();
  for (const tau of TAUS) {
    const m = model(tau);
    for (const f of factors) {
      const h = f === 1 ? a : cell(f);
      let pairs = 0;
      let regressed = 0;
      let inconclusive = 0;
      for (const x of a)
        for (const y of h) {
          if (x === y) continue;
          const v = verdict(x.result, y.result, m);
          pairs++;
          if (v === 'regressed') regressed++;
          else if (v === 'inconclusive') inconclusive++;
        }
      const sizes = [...a, ...h].map(requestsOf).sort((p, q) => p - q);
      out.push({
        shape,
        tau,
        kind: f === 1 ? 'A/A' : `+${Math.round((f - 1) * 100)}%`,
        pairs,
        regressed,
        inconclusive,
        requestsPerSide: sizes[Math.floor(sizes.length / 2)] ?? 0,
      });
    }
  }
}

const pct = (k: number, n: number) => (n === 0 ? '–' : `${((100 * k) / n).toFixed(1)}% (${k}/${n})`);
const lines = [
  '# Tuning the default between-run noise on real runs',
  '',
  `Runs: ${runs.length} real product runs with in-run intervals, from \`${where}\` (saturated runs left out of the cells).`,
  `Command: \`node bench/calibration-tune.ts <that folder>\`. One stored baseline, no history; τ is the latency`,
  "floor (relative sd of one run beyond its own interval: p50/p90/p95 τ, p99 1.5 τ); the verdict is the product's `judge`.",
  '',
  '| shape | τ | comparison | pairs | judged regressed | judged inconclusive | requests per side |',
  '| --- | ---: | --- | ---: | ---: | ---: | ---: |',
  ...out.map(
    (c) =>
      `| ${c.shape} | ${(c.tau * 100).toFixed(0)}% | ${c.kind} | ${c.pairs} | ${pct(c.regressed, c.pairs)} | ${pct(c.inconclusive, c.pairs)} | ${c.requestsPerSide} |`,
  ),
];
console.log(lines.join('\n'));
writeFileSync(path.join(ROOT, 'bench/results/calibration-tune.md'), `${lines.join('\n')}\n`);
writeFileSync(
  path.join(ROOT, 'bench/results/calibration-tune.json'),
  `${JSON.stringify({ source: where, cells: out }, null, 1)}\n`,
);
