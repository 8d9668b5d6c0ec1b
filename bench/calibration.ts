// The PR verdict calibrated on real runs (issue 24, "Measure it on real runs"). Real product runs
// (src/cli/bin.ts run, local backend, 2 runners, real k6) against a target in its own process whose
// service time is scaled by a factor (bench/calibration/target-server.ts: a `mixed` shape, some CPU
// then a wait, and a CPU-bound one), plus a cell whose generator is saturated (maxVUs too low).
// Runs are interleaved A B C D D C B A across rounds. Every result is kept in a data folder under
// os.tmpdir() (path printed) and a compact copy in bench/results/<out>-runs.json (< 2 MB), and
// judged by every mode the product offers (bench/calibration/judges.ts); the 1% level and the run
// size come from a block bootstrap of the runs' own per-window latency (bench/calibration/bootstrap.ts).
// Writes bench/results/<out>.{json,md}.
// Usage: node bench/calibration.ts --help;  re-judge stored runs: --judge-only <data dir | runs file>
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrapShape, mixtureError } from './calibration/bootstrap.ts';
import { evaluateShape } from './calibration/evaluate.ts';
import { hasUncertainty, loadJudges } from './calibration/judges.ts';
import { startBackgroundLoad } from './calibration/load.ts';
import { cells, type Plan, parsePlan, schedule } from './calibration/plan.ts';
import { bootstrapLines, rowLines, sizeLines, targetLines } from './calibration/report.ts';
import { loadRuns, p95Of, type RunRecord, requestsOf, runOnce, saveIndex } from './calibration/runs.ts';
import { startCalibrationTarget } from './calibration/target.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const argv = process.argv.slice(2);
let plan: Plan;
try {
  plan = parsePlan(argv);
} catch (e) {
  console.error(`calibration: ${(e as Error).message}`);
  process.exit(2);
}

const started = Date.now();
let runs: RunRecord[];
const failed: string[] = [];
let meta: Omit<Plan, 'judgeOnly' | 'dataDir'> & { iterationsPerMs?: number; command?: string };
if (plan.judgeOnly) {
  runs = loadRuns(plan.judgeOnly);
  const stored = statSync(plan.judgeOnly).isFile() ? plan.judgeOnly : path.join(plan.judgeOnly, 'runs.json');
  const { plan: m } = JSON.parse(readFileSync(stored, 'utf8')) as { plan: typeof meta };
  meta = { ...m, ...(plan.label ? { label: plan.label } : {}), bootstrap: plan.bootstrap, out: plan.out };
  console.log(`re-judging ${runs.length} stored runs from ${plan.judgeOnly}`);
} else {
  const dataDir = plan.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'k6d-calibration-'));
  mkdirSync(dataDir, { recursive: true });
  console.log(`calibration data folder (every run's result JSON): ${dataDir}`);
  const target = await startCalibrationTarget();
  const stopLoad = startBackgroundLoad(plan.backgroundLoad);
  const { judgeOnly: _j, dataDir: _d, ...rest } = plan;
  meta = {
    ...rest,
    iterationsPerMs: target.iterationsPerMs,
    command: `node bench/calibration.ts ${argv.join(' ')}`.trim(),
  };
  const order = schedule(cells(plan), plan.runs);
  runs = [];
  try {
    for (const [seq, { cell, round }] of order.entries()) {
      const t0 = Date.now();
      let rec: RunRecord;
      try {
        rec = await runOnce(cell, seq, round, {
          dataDir,
          targetUrl: target.url,
          rate: plan.rate,
          durationS: plan.durationS,
          windowS: plan.windowS,
        });
      } catch (e) {
        // One failed run must not cost the rest of a 45-minute bench: counted and skipped.
        failed.push(`${cell.id} round ${round}: ${(e as Error).message}`);
        console.log(
          `[${seq + 1}/${order.length}] ${cell.id} round ${round}: FAILED (${(e as Error).message})`,
        );
        continue;
      }
      rec.load1 = Number(os.loadavg()[0]?.toFixed(2));
      runs.push(rec);
      saveIndex(dataDir, runs, meta);
      const eta = ((Date.now() - started) / (seq + 1)) * (order.length - seq - 1);
      console.log(
        `[${seq + 1}/${order.length}] ${cell.id} round ${round}: p95 ${p95Of(rec)?.toFixed(2)} ms, ${requestsOf(rec)} requests, saturated ${rec.result.loadGenerator?.saturated ?? '?'} (${((Date.now() - t0) / 1000).toFixed(1)} s; ETA ${(eta / 60000).toFixed(1)} min)`,
      );
    }
  } finally {
    stopLoad();
    await target.stop();
  }
}

const judges = await loadJudges(runs.some((r) => hasUncertainty(r.result)));
const shapes = [...new Set(runs.map((r) => r.shape))];
const rows = shapes.flatMap((s) => evaluateShape(s, runs, judges, meta.abRounds, meta.bootstrap));
const native = Math.round(runs[0]?.windows.length ?? 1);
const lengths = [...new Set([native, Math.round(30 / meta.windowS), Math.round(60 / meta.windowS)])]
  .filter((l) => l >= 1)
  .sort((a, b) => a - b);
const boot = shapes.flatMap((s) =>
  bootstrapShape(s, runs, lengths, meta.windowS, meta.abRounds, meta.bootstrap),
);
const mixErr = Object.fromEntries(
  shapes.map((s) => [
    s,
    mixtureError(
      runs.filter((r) => r.shape === s),
      p95Of,
    ),
  ]),
);
const cellCounts: Record<string, number> = {};
for (const r of runs) cellCounts[r.cell] = (cellCounts[r.cell] ?? 0) + 1;

const loads = runs
  .map((r) => r.load1)
  .filter((x): x is number => x !== undefined)
  .sort((x, y) => x - y);
const loadNote = loads.length
  ? ` The machine's 1-minute load average at the end of each run: median ${loads[Math.floor(loads.length / 2)]}, range ${loads[0]}–${loads.at(-1)} (2 cores).`
  : '';
const command = `node bench/calibration.ts ${argv.join(' ')}`.trim();
const date = new Date().toISOString();
const summary = {
  failedRuns: failed,
  date,
  command,
  label: meta.label,
  plan: meta,
  cells: cellCounts,
  notes: judges.notes,
  pairedSource: judges.pairedSource,
  inRunUncertainty: judges.hasInRun,
  mixtureError: mixErr,
  rows,
  bootstrap: boot,
  wallS: Math.round((Date.now() - started) / 1000),
};
for (const line of [
  ...targetLines(rows),
  '',
  ...rowLines(rows),
  '',
  ...bootstrapLines(boot),
  '',
  ...sizeLines(boot),
])
  console.log(line);

const out = path.join(ROOT, 'bench/results', meta.out);
writeFileSync(`${out}.json`, `${JSON.stringify(summary, null, 1)}\n`);
const compact = JSON.stringify({ plan: meta, runs: runs.map(({ file: _f, ...r }) => r) });
let compactNote = `not written (${Math.round(compact.length / 1e6)} MB is past 2 MB): re-judge from the data folder`;
if (compact.length < 2_000_000) {
  writeFileSync(`${out}-runs.json`, `${compact}\n`);
  compactNote = `bench/results/${meta.out}-runs.json (${Math.round(compact.length / 1024)} KB)`;
}
const md = [
  `# PR verdict calibrated on real runs${meta.label ? ` — ${meta.label}` : ''} (${date})`,
  '',
  `\`${meta.command ?? command}\`${plan.judgeOnly ? `, re-judged from the stored runs by \`${command}\`` : ''}: ${meta.runs} runs per cell of ${meta.durationS} s at ${meta.rate} req/s, 2 local runners (real k6, local backend), interleaved A B C D D C B A across rounds, ${meta.backgroundLoad ? `with a noisy neighbour burning ${Math.round(100 * meta.backgroundLoad)}% of a core in random 5–50 ms bursts (bench/calibration/load.ts) besides whatever else ran on the shared 2-core machine` : 'with no added load (only whatever else ran on the shared 2-core machine)'}. Cells: ${Object.entries(
    cellCounts,
  )
    .map(([c, n]) => `${c} ${n}`)
    .join(
      ', ',
    )}. The runs' compact results: ${compactNote}.${loadNote}${meta.label?.includes('small') ? ' Small-scale: this validates the harness end to end; with so few runs per cell its shares mean little.' : ''}${failed.length ? ` ${failed.length} runs failed and were skipped: ${failed.join('; ')}.` : ''} Modes: ${judges.notes.join('; ')}; in-run uncertainty ${judges.hasInRun ? 'present in the results' : 'absent from these results (that mode is not on this build)'}.`,
  '',
  '## Targets (issue 24)',
  '',
  ...targetLines(rows),
  '',
  '## Every comparison of real runs',
  '',
  'fixed = `judge` with one stored baseline and no history; history = the same with 5 other A runs as history (the noise gate; with fewer than 7 A runs the history is shorter than the minimum of the gate and the fixed rule applies); in-run = `judge` on results that carry their own uncertainty; ab-rounds = non-overlapping blocks of K = ' +
    `${meta.abRounds} consecutive rounds (A and B of one round next to each other; A/A pairs A of round r with A of round r+1, for every r) judged by ${judges.pairedSource === 'product' ? 'src/compare/paired.ts' : 'the STAND-IN paired t-test (one-sided 1% on ln(p95 B / p95 A); regressed also needs a mean change above 3%)'}; ab-rounds (resampled) = ${meta.bootstrap} draws of K rounds with replacement from the same real rounds. A/A and +x% use every ordered pair of runs (not independent: the upper 95% bound of the A/A share resamples runs, not pairs). Saturated = an A run against a run of the saturated cell, both ways round. Measured p95 change = median p95 of the head cell's unsaturated runs over that of the A cell's, minus 1; saturated runs = runs of that cell whose generator the product found saturated (any cell can saturate on a busy machine).`,
  '',
  ...rowLines(rows),
  '',
  "## The 1% level and the run size: block bootstrap of the runs' own interval data",
  '',
  `Each run tags every request with its ${meta.windowS} s window, and each window's latency quantiles (count, min, p50, p75, p90, p95, p97, p98, p99, p99.9, max, merged across the runners by the product) are kept in the result. A synthetic run is a sequence of moving blocks of 3 consecutive windows drawn with replacement; its p95 and p99 are those of the mixture of its windows' CDFs (piecewise linear through the quantiles; on the real runs this reproduces the run's own p95 within a median ${Object.entries(
    mixErr,
  )
    .map(([s, e]) => `${(100 * e).toFixed(1)}% (${s})`)
    .join(
      ', ',
    )}). "per-run" draws every block of a synthetic run from one real run (its level kept whole: conservative beyond the real run length), "pooled" from any run of the cell (optimistic). ${meta.bootstrap} synthetic pairs per figure; fixed rule here = p95 or p99 worse beyond the default tolerances (10% and 1 ms, 15% and 2 ms); A/B = the stand-in paired test on K = ${meta.abRounds} synthetic rounds of length/K each.`,
  '',
  ...bootstrapLines(boot),
  '',
  '## Run size at which the targets hold',
  '',
  ...sizeLines(boot),
  '',
].join('\n');
writeFileSync(`${out}.md`, md);
console.log(`wrote ${out}.{json,md} in ${summary.wallS} s`);
