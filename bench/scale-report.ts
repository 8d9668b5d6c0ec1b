/**
 * bench/results/scale.md from bench/scale.ts's figures (`scale.json`): the totals beside the
 * targets, every stage's wall and CPU ms as median (min–max), and the before → after lines.
 *
 *   node bench/scale-report.ts    (renders bench/results/scale.md again from scale.json)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Median and spread of one figure over a row's processes, ms. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** One runner count timed for one code (this checkout or the baseline). */
export interface ScaleRow {
  code: 'this' | 'baseline';
  runners: number;
  processes: number;
  summaryKiB: number;
  totalMs: Spread;
  cpuMs: Spread;
  stages: Record<string, Spread>;
  cpuStages: Record<string, Spread>;
}

/** What bench/scale.ts writes to bench/results/scale.json. */
export interface ScaleFigures {
  date: string;
  commit: string;
  baseline?: string;
  grid: number;
  trends: number;
  thresholds: number;
  cores: number;
  processes: number;
  loadAverage: { start: number; end: number };
  stages: string[];
  rows: ScaleRow[];
}

/** Target of issue 26: wall ms of the whole path by runner count. */
const TARGETS: Record<number, number> = { 100: 100, 1000: 1000 };

/** `median (min–max)`. */
export const fmt = (x: Spread, digits = 0): string =>
  `${x.median.toFixed(digits)} (${x.min.toFixed(digits)}–${x.max.toFixed(digits)})`;

/** The markdown report of one bench:scale run. */
export function scaleReport(f: ScaleFigures): string {
  const code = (r: ScaleRow) => (r.code === 'this' ? f.commit : `${f.baseline} (before)`);
  const verdict = (r: ScaleRow) => {
    const target = TARGETS[r.runners];
    if (target === undefined || r.code !== 'this') return '';
    return `< ${target} ms: ${r.totalMs.median < target ? 'met' : 'missed'} by the median${r.totalMs.max < target ? ', every pass' : ''}`;
  };
  const counts = [...new Set(f.rows.map((r) => r.runners))];
  return [
    '# Scale: the whole post-run path, one cold pass per process',
    '',
    `Measured ${f.date} with \`${f.baseline ? `SCALE_BASELINE=<checkout of ${f.baseline}> ` : ''}flock /tmp/k6d-bench.lock npm run bench:scale\` (bench/scale.ts, each pass in bench/scale-pass.ts) at ${f.commit}. Each pass is a fresh Node process that runs the path once, as a real run does after its runners ended: read and parse every runner summary (collectAll), assembleResult (aggregate, thresholds, groups, handleSummary data, result), write the result JSON, render the markdown report (with charts), write the HTML report. Module loading is not counted (a real run has the modules loaded). Synthetic runner summaries shaped like real ones: ${f.trends} trends (submetrics included) × ${f.grid} grid percentiles, 20 checks in 2 groups, ${f.thresholds} thresholds. ${f.processes} processes per row${f.baseline ? `, this code's and the baseline's (${f.baseline}, its own summary format) alternated` : ''}: median (min–max). CPU is the process's (user + system, Node's GC and compiler threads included, so it can exceed the wall time). Machine: ${f.cores} cores shared with other jobs, load average ${f.loadAverage.start.toFixed(1)} at the start and ${f.loadAverage.end.toFixed(1)} at the end. Target (issue 26): < 100 ms at 100 runners, < 1 s at 1,000 (wall).`,
    '',
    '| runners | code | summary KiB | wall ms | CPU ms | target |',
    '| ---: | --- | ---: | ---: | ---: | --- |',
    ...f.rows.map(
      (r) =>
        `| ${r.runners} | ${code(r)} | ${r.summaryKiB.toFixed(0)} | ${fmt(r.totalMs)} | ${fmt(r.cpuMs)} | ${verdict(r)} |`,
    ),
    '',
    'Per stage, wall ms and CPU ms, median (min–max):',
    '',
    `| runners | code | ${f.stages.map((s) => `${s} wall | ${s} CPU`).join(' | ')} |`,
    `| ---: | --- | ${f.stages.map(() => '---: | ---:').join(' | ')} |`,
    ...f.rows.map(
      (r) =>
        `| ${r.runners} | ${code(r)} | ${f.stages.map((s) => `${fmt(r.stages[s]!, 1)} | ${fmt(r.cpuStages[s]!, 1)}`).join(' | ')} |`,
    ),
    '',
    ...(f.baseline
      ? [
          'Before → after (median wall, median CPU):',
          '',
          ...counts.map((n) => {
            const a = f.rows.find((r) => r.runners === n && r.code === 'baseline')!;
            const b = f.rows.find((r) => r.runners === n && r.code === 'this')!;
            return `- ${n} runners: ${a.totalMs.median.toFixed(0)} → ${b.totalMs.median.toFixed(0)} ms wall, ${a.cpuMs.median.toFixed(0)} → ${b.cpuMs.median.toFixed(0)} ms CPU (collect ${a.stages.collect!.median.toFixed(0)} → ${b.stages.collect!.median.toFixed(0)}, assemble ${a.stages.assemble!.median.toFixed(0)} → ${b.stages.assemble!.median.toFixed(0)})`;
          }),
          '',
        ]
      : []),
  ].join('\n');
}

if (import.meta.filename === process.argv[1]) {
  const results = path.join(import.meta.dirname, 'results');
  const figures = JSON.parse(readFileSync(path.join(results, 'scale.json'), 'utf8')) as ScaleFigures;
  writeFileSync(path.join(results, 'scale.md'), scaleReport(figures));
}
