/**
 * The product's overhead over a plain `k6 run` of the same 10 s test, on this machine: alternated
 * rounds of plain k6 and `k6-distributed run --runners N` (N = 1 and 4) against a real HTTP target
 * on 127.0.0.1, each a fresh process from the command line, with where the time goes, read from
 * the CLI's own log lines as they arrive. Prints the figures and writes bench/results/overhead.{json,md}.
 *
 *   node bench/overhead.ts        (OVERHEAD_ROUNDS=3; OVERHEAD_CLI=<the CLI's JS entry>, default
 *                                 src/cli/bin.ts; a bundle as in dist/cli.js loads in ~0.1 s
 *                                 where the sources, TypeScript stripped at load, take ~0.35 s)
 *
 * Stages: start (Node, the modules, `k6 archive` and `k6 inspect`, up to "preflight ok"), launch
 * (the k6 processes up to "all runners ready"), start (up to "started"), test (up to the last
 * progress line, after the runners' linger ended and their summaries were read), result (aggregate
 * and write, up to "result written"), end (HTML, report and exit).
 */
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { median } from '../src/compare/noise.ts';
import { startNodeTarget } from '../src/demo/target.ts';
import { resolveK6Binary } from '../src/k6/binary.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const ROUNDS = Number(process.env.OVERHEAD_ROUNDS ?? 3);
const SCRIPT = `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 4, duration: '10s', gracefulStop: '0s' } } };
export default function () { http.get(__ENV.TARGET + '/x'); sleep(0.1); }
`;
const MARKS = [
  ['start', /preflight ok/],
  ['launch', /runners? ready/],
  ['start signal', /started \d+ runners?/],
  ['test', /ended: runners=/],
  ['result', /result written/],
] as const;

/** Runs a command to its end: its wall time in s and when each mark's line arrived (s after spawn). */
function timed(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ totalS: number; marks: Record<string, number> }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const marks: Record<string, number> = {};
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let buffer = '';
    const onData = (d: Buffer) => {
      buffer += d;
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        for (const [name, re] of MARKS)
          if (marks[name] === undefined && re.test(line)) marks[name] = (performance.now() - t0) / 1000;
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve({ totalS: (performance.now() - t0) / 1000, marks })
        : reject(new Error(`${command} exited ${code}`)),
    );
  });
}

async function main() {
  const dir = path.join(os.tmpdir(), `k6d-bench-overhead-${process.pid}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'ten.js'), SCRIPT);
  const target = await startNodeTarget();
  const k6 = resolveK6Binary(undefined);
  const entry = process.env.OVERHEAD_CLI ?? path.join(ROOT, 'src/cli/bin.ts');
  const cli = [entry, 'run', 'ten.js', '--no-html', '--out', 'r.json'];
  const plain: number[] = [];
  const product: Record<number, Array<{ totalS: number; marks: Record<string, number> }>> = { 1: [], 4: [] };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const n of [1, 4]) {
        plain.push((await timed(k6, ['run', '-q', '-e', `TARGET=${target.url}`, 'ten.js'], dir)).totalS);
        product[n]!.push(
          await timed(
            process.execPath,
            [...cli, '--runners', String(n), '--', '-e', `TARGET=${target.url}`],
            dir,
          ),
        );
        console.error(
          `round ${r + 1}, N=${n}: plain ${plain.at(-1)!.toFixed(2)} s, product ${product[n]!.at(-1)!.totalS.toFixed(2)} s`,
        );
      }
    }
  } finally {
    await target.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const plainS = median(plain);
  const rows = [1, 4].map((n) => {
    const runs = product[n]!;
    const stage = (name: string, prev: string | undefined) =>
      median(runs.map((x) => (x.marks[name] ?? Number.NaN) - (prev ? (x.marks[prev] ?? Number.NaN) : 0)));
    const names = MARKS.map(([name]) => name);
    const stages = Object.fromEntries(names.map((name, i) => [name, stage(name, names[i - 1])]));
    stages.end = median(runs.map((x) => x.totalS - (x.marks.result ?? Number.NaN)));
    return {
      runners: n,
      totalS: median(runs.map((x) => x.totalS)),
      overheadS: median(runs.map((x) => x.totalS)) - plainS,
      stages,
    };
  });
  const at = new Date().toISOString();
  const cliName = path.relative(ROOT, entry).startsWith('..')
    ? `a bundle of src/cli/bin.ts built as dist/cli.js is, ${entry}`
    : path.relative(ROOT, entry);
  await writeFile(
    path.join(ROOT, 'bench/results/overhead.json'),
    `${JSON.stringify({ at, rounds: ROUNDS, cli: cliName, plainS, plain, rows }, null, 2)}\n`,
  );
  const md = [
    '# Local overhead over plain `k6 run`',
    '',
    `Measured ${at} with \`node bench/overhead.ts\`: a 10 s test (4 VUs, constant-vus) against a Node HTTP target on 127.0.0.1, ${ROUNDS} alternated rounds of plain \`k6 run -q\` and \`k6-distributed run --runners N --no-html\` from the command line (the CLI: ${cliName}). Medians, s. Machine: ${os.cpus().length} cores shared with other jobs, load average ${os.loadavg()[0]!.toFixed(1)}. Targets (issue 26): overhead ≤ 0.5 s at N=1, ≤ 1 s at N=4.`,
    '',
    `Plain k6: ${plainS.toFixed(2)} s.`,
    '',
    '| runners | total | overhead | start (Node, archive, inspect) | launch + barrier | start signal | test + linger end + collect | result | end (exit) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.runners} | ${r.totalS.toFixed(2)} | ${r.overheadS >= 0 ? '+' : ''}${r.overheadS.toFixed(2)} | ${['start', 'launch', 'start signal', 'test', 'result', 'end'].map((k) => r.stages[k]!.toFixed(2)).join(' | ')} |`,
    ),
    '',
    'The "test" column holds the 10 s of the test itself; plain k6 pays its own start and end inside its total.',
    '',
  ].join('\n');
  await writeFile(path.join(ROOT, 'bench/results/overhead.md'), md);
  console.log(md);
}

await main();
