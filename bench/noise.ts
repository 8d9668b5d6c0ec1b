/**
 * How often each regression rule cries wolf, and how often it catches a real slowdown, on
 * synthetic histories with known noise. Prints the figures and writes bench/results/noise.json
 * and bench/results/noise.md.
 *
 *   ./node_modules/.bin/node bench/noise.ts
 *
 * Model (one metric, p95 latency of 40 ms, lower is better, the default p95 floors 10% and 1 ms):
 * every run's value is 40 ms × (1 + cv × ε), ε standard normal; "with outliers" adds, with
 * probability 10% per run (history and head alike), a slow run ×(1.2–1.5) (a noisy node, a busy
 * CI machine). History: the base branch's last N runs; the baseline is the newest of them. Head is
 * one more run, shifted by +0/+5/+10/+20/+50%. A shift of 0 gives the false-positive rate.
 *
 * Rules: `fixed` = today's rule (head vs the baseline run, beyond both floors); `history` = the
 * noise gate of src/compare/noise.ts (outside median ± 3 × 1.4826 × MAD AND beyond the floors vs
 * the median); `history, floors 0` = the range alone, to show what the statistic does by itself.
 * Seeded: the figures are the same on every run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_TOLERANCES, judgeChange, type Tolerance } from '../src/compare/judgement.ts';
import { DEFAULT_NOISE_GATE, judgeWithHistory } from '../src/compare/noise.ts';
import { rng } from './calibration/stats.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const TRIALS = 20_000;
const BASE_MS = 40;
const SHIFTS = [0, 5, 10, 20, 50];
const NOISE_CVS = [0.02, 0.05, 0.1, 0.2];
const HISTORY_SIZES = [5, 10];

function normal(random: () => number): number {
  // Box–Muller.
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

interface Noise {
  cv: number;
  outliers: boolean;
}

function run(random: () => number, noise: Noise, shiftPct = 0): number {
  let value = BASE_MS * (1 + shiftPct / 100) * (1 + noise.cv * normal(random));
  if (noise.outliers && random() < 0.1) value *= 1.2 + 0.3 * random();
  return Math.max(value, 0.01);
}

type Rule = 'fixed' | 'history' | 'history, floors 0';
const RULES: Rule[] = ['fixed', 'history', 'history, floors 0'];

function flags(history: number[], head: number, floors: Tolerance): Record<Rule, boolean> {
  const common = { history, head, direction: 'lower' as const, unit: 'ms' as const };
  return {
    fixed: judgeChange(history.at(-1), head, 'lower', floors, 'ms') === 'worse',
    history: judgeWithHistory({ ...common, tolerance: floors }).regressed,
    'history, floors 0': judgeWithHistory({ ...common, tolerance: { relativePct: 0, absolute: 0 } })
      .regressed,
  };
}

interface Row {
  noise: string;
  historyRuns: number;
  rule: Rule;
  /** Share of trials flagged at each shift (shift 0: false positives), in percent. */
  flaggedPct: Record<string, number>;
}

const rows: Row[] = [];
const floors = DEFAULT_TOLERANCES.p95;
let seed = 1;
for (const outliers of [false, true]) {
  for (const cv of NOISE_CVS) {
    for (const historyRuns of HISTORY_SIZES) {
      const noise: Noise = { cv, outliers };
      const counts = Object.fromEntries(RULES.map((r) => [r, SHIFTS.map(() => 0)])) as Record<Rule, number[]>;
      SHIFTS.forEach((shift, s) => {
        const random = rng(seed++);
        for (let t = 0; t < TRIALS; t++) {
          const history = Array.from({ length: historyRuns }, () => run(random, noise));
          const f = flags(history, run(random, noise, shift), floors);
          for (const rule of RULES) if (f[rule]) counts[rule][s]!++;
        }
      });
      for (const rule of RULES) {
        rows.push({
          noise: `cv ${cv * 100}%${outliers ? ' + 10% outliers' : ''}`,
          historyRuns,
          rule,
          flaggedPct: Object.fromEntries(
            SHIFTS.map((shift, s) => [`+${shift}%`, Math.round((counts[rule][s]! / TRIALS) * 1000) / 10]),
          ),
        });
      }
    }
  }
}

const header = `| noise | history runs | rule | false positives (+0%) | ${SHIFTS.slice(1)
  .map((s) => `detected at +${s}%`)
  .join(' | ')} |`;
const lines = [
  `# Regression gate against noise (${new Date().toISOString()})`,
  '',
  `p95 of ${BASE_MS} ms, floors ${floors.relativePct}% and ${floors.absolute} ms, ${TRIALS} trials per cell, ` +
    `history gate: median ± ${DEFAULT_NOISE_GATE.k} × 1.4826 × MAD, at least ${DEFAULT_NOISE_GATE.minHistory} runs. ` +
    'Command: `./node_modules/.bin/node bench/noise.ts`.',
  '',
  header,
  `|---|---:|---|${SHIFTS.map(() => '---:').join('|')}|`,
  ...rows.map(
    (r) =>
      `| ${r.noise} | ${r.historyRuns} | ${r.rule} | ${SHIFTS.map((s) => `${r.flaggedPct[`+${s}%`]!.toFixed(1)}%`).join(' | ')} |`,
  ),
  '',
];
const markdown = lines.join('\n');
console.log(markdown);
await mkdir(RESULTS, { recursive: true });
await writeFile(
  path.join(RESULTS, 'noise.json'),
  `${JSON.stringify({ date: new Date().toISOString(), baseMs: BASE_MS, floors, trials: TRIALS, gate: DEFAULT_NOISE_GATE, rows }, null, 2)}\n`,
);
await writeFile(path.join(RESULTS, 'noise.md'), markdown);
