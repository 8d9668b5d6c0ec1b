/**
 * Benchmarks of the local backend, with real k6 processes against a real HTTP target on 127.0.0.1.
 * Prints the figures and writes them to bench/results/local.json and bench/results/local.md.
 *
 *   npm run bench                 (all)
 *   npm run bench -- skew merge   (some: skew, merge, rps)
 *
 * The machine is shared and noisy: compare the ratios inside one run, not figures across runs.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalBackend } from '../src/backends/local/backend.ts';
import { median } from '../src/compare/noise.ts';
import { parseRunConfig } from '../src/config.ts';
import {
  ensureNginx,
  type RecordingTarget,
  startNginx,
  startNodeTarget,
  type Target,
} from '../src/demo/target.ts';
import { consoleLogger, type Logger, silentLogger } from '../src/log.ts';
import { exactPercentile } from '../src/result/quantiles.ts';
import type { RunResult } from '../src/result/schema.ts';
import { runTest } from '../src/run/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const quiet: Logger = { ...silentLogger, warning: (m) => console.error(`  warning: ${m}`) };

async function scratch(): Promise<string> {
  const dir = path.join(os.tmpdir(), `k6d-bench-${process.pid}-${Math.random().toString(36).slice(2)}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function run(script: string, runners: number, k6Args: string[], dir: string): Promise<RunResult> {
  const file = path.join(dir, `script-${runners}.js`);
  await writeFile(file, script);
  const config = parseRunConfig({
    script: file,
    runners,
    k6Args,
    resultPath: path.join(dir, `result-${runners}.json`),
  });
  return runTest(config, { createBackend: (k6, work) => new LocalBackend(k6, work), log: quiet });
}

/** Start skew with 4 runners: the orchestrator's figure and the spread of first requests at the target. */
async function benchSkew(target: RecordingTarget, dir: string) {
  const script = `
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 4, duration: '2s' } } };
export default function () { http.get(__ENV.TARGET + '/skew', { headers: { 'x-runner': __ENV.K6D_RUNNER_INDEX } }); }
`;
  const rounds = [];
  for (let i = 0; i < 7; i++) {
    const before = target.arrivals.length;
    const result = await run(script, 4, ['-e', `TARGET=${target.url}`], dir);
    const first = new Map<string, number>();
    for (const a of target.arrivals.slice(before))
      if (a.runner && !first.has(a.runner)) first.set(a.runner, a.at);
    const firsts = [...first.values()];
    rounds.push({
      startSkewMs: result.startSkewMs,
      firstRequestSpreadMs: Math.max(...firsts) - Math.min(...firsts),
    });
  }
  return {
    runners: 4,
    rounds: rounds.length,
    startSkewMs: {
      median: median(rounds.map((r) => r.startSkewMs)),
      max: Math.max(...rounds.map((r) => r.startSkewMs)),
    },
    firstRequestSpreadMs: {
      median: median(rounds.map((r) => r.firstRequestSpreadMs)),
      max: Math.max(...rounds.map((r) => r.firstRequestSpreadMs)),
    },
  };
}

/**
 * Merged percentiles against the raw samples of every runner (`--out json=raw-{runner}.json`), with
 * one slower runner, beside the mean of the runners' own percentiles.
 */
async function benchMerge(target: Target, dir: string) {
  const script = `
import http from 'k6/http';
const slow = __ENV.K6D_RUNNER_INDEX === '3';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 16, iterations: 16000 } } };
export default function () {
  const ms = slow ? 4 + (__ITER % 13) : 1 + (__ITER % 5);
  http.get(__ENV.TARGET + '/slow?ms=' + ms);
}
`;
  const result = await run(
    script,
    4,
    ['-e', `TARGET=${target.url}`, '--out', `json=${dir}/raw-{runner}.json`],
    dir,
  );
  const perRunner: number[][] = [];
  for (let r = 0; r < 4; r++) {
    const samples: number[] = [];
    for (const line of (await readFile(path.join(dir, `raw-${r}.json`), 'utf8')).split('\n')) {
      if (line.includes('"metric":"http_req_duration"') && line.includes('"type":"Point"')) {
        samples.push((JSON.parse(line) as { data: { value: number } }).data.value);
      }
    }
    perRunner.push(samples.sort((a, b) => a - b));
  }
  const all = perRunner.flat().sort((a, b) => a - b);
  const rows = [95, 99, 99.9].map((p) => {
    const truth = exactPercentile(all, p);
    const merged = result.metrics.http_req_duration!.values[`p(${p})`]!;
    const averaged = perRunner.reduce((s, r) => s + exactPercentile(r, p), 0) / perRunner.length;
    return {
      percentile: `p(${p})`,
      trueMs: truth,
      mergedMs: merged,
      mergedErrorPct: (100 * (merged - truth)) / truth,
      averagedMs: averaged,
      averagedErrorPct: (100 * (averaged - truth)) / truth,
    };
  });
  return { runners: 4, samples: all.length, slowRunner: 3, rows };
}

/** Total RPS of the same script and duration with 1, 2 and 4 runners. */
async function benchRps(target: Target, dir: string) {
  const script = `
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 16, duration: '10s' } } };
export default function () { http.get(__ENV.TARGET + '/api/items'); }
`;
  const rows = [];
  for (const runners of [1, 2, 4]) {
    const result = await run(script, runners, ['-e', `TARGET=${target.url}`], dir);
    rows.push({
      runners,
      rps: result.metrics.http_reqs!.values.rate!,
      requests: result.metrics.http_reqs!.values.count!,
    });
  }
  const base = rows[0]!.rps;
  return {
    target: target.kind,
    cores: os.availableParallelism(),
    rows: rows.map((r) => ({ ...r, vsOneRunner: r.rps / base })),
  };
}

function markdown(figures: Record<string, unknown>): string {
  const lines = [
    `# Local backend benchmark (${new Date().toISOString()}, ${os.availableParallelism()} cores)`,
    '',
  ];
  const skew = figures.skew as Awaited<ReturnType<typeof benchSkew>> | undefined;
  if (skew) {
    lines.push(
      `## Start skew, ${skew.runners} runners, ${skew.rounds} rounds`,
      '',
      '| Measure | Median | Max |',
      '|---|---:|---:|',
      `| Start skew (spread of the runners' start confirmations) | ${skew.startSkewMs.median.toFixed(2)} ms | ${skew.startSkewMs.max.toFixed(2)} ms |`,
      `| Spread of the runners' first requests at the target | ${skew.firstRequestSpreadMs.median.toFixed(2)} ms | ${skew.firstRequestSpreadMs.max.toFixed(2)} ms |`,
      '',
    );
  }
  const merge = figures.merge as Awaited<ReturnType<typeof benchMerge>> | undefined;
  if (merge) {
    lines.push(
      `## Global percentiles vs raw samples (${merge.runners} runners, runner ${merge.slowRunner} slower, ${merge.samples} samples)`,
      '',
      '| Percentile | True | Merged (ours) | Error | Mean of runner percentiles | Error |',
      '|---|---:|---:|---:|---:|---:|',
      ...merge.rows.map(
        (r) =>
          `| ${r.percentile} | ${r.trueMs.toFixed(3)} ms | ${r.mergedMs.toFixed(3)} ms | ${r.mergedErrorPct.toFixed(2)}% | ${r.averagedMs.toFixed(3)} ms | ${r.averagedErrorPct.toFixed(2)}% |`,
      ),
      '',
    );
  }
  const rps = figures.rps as Awaited<ReturnType<typeof benchRps>> | undefined;
  if (rps) {
    lines.push(
      `## Total RPS, same script (16 VUs, 10 s), ${rps.target} target on the same ${rps.cores} cores`,
      '',
      '| Runners | RPS | vs 1 runner |',
      '|---:|---:|---:|',
      ...rps.rows.map((r) => `| ${r.runners} | ${r.rps.toFixed(0)} | ${r.vsOneRunner.toFixed(2)}× |`),
      '',
    );
  }
  return lines.join('\n');
}

async function main() {
  const wanted = new Set(process.argv.slice(2).filter((a) => !a.startsWith('-')));
  const all = wanted.size === 0;
  const dir = await scratch();
  const node = await startNodeTarget();
  const nginx = ensureNginx(consoleLogger((l) => process.stderr.write(l))) ? await startNginx() : undefined;
  const figures: Record<string, unknown> = {};
  try {
    if (all || wanted.has('skew')) {
      console.error('start skew ...');
      figures.skew = await benchSkew(node, dir);
    }
    if (all || wanted.has('merge')) {
      console.error('percentile merge ...');
      figures.merge = await benchMerge(node, dir);
    }
    if (all || wanted.has('rps')) {
      console.error('RPS scaling ...');
      figures.rps = await benchRps(nginx ?? node, dir);
    }
  } finally {
    await node.stop();
    await nginx?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  await mkdir(RESULTS, { recursive: true });
  const md = markdown(figures);
  await writeFile(
    path.join(RESULTS, 'local.json'),
    `${JSON.stringify({ at: new Date().toISOString(), ...figures }, null, 2)}\n`,
  );
  await writeFile(path.join(RESULTS, 'local.md'), md);
  console.log(md);
}

await main();
