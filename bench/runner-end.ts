/**
 * What a runner's end costs: from the signal that ends a runner's `--linger` (SIGTERM) to its
 * exit, the time in which k6 writes the runner's summary (the runner entry module's handleSummary,
 * src/k6/entry.ts, with the quantile grid of plan.ts) and exits. Every runner but the first pays it
 * at the end of the test, all at once, so on Kubernetes it is on the critical path of the end, and
 * on one machine (the local backend, or the test cluster's stand-in nodes) N runners pay it on the
 * same cores.
 *
 * One real k6 (the pinned build) runs the runner entry module of a 3 s constant-vus test (2 VUs) at
 * a local HTTP target, with `--linger`; once its test has ended (`GET /v1/status` 9), it gets
 * SIGTERM. Rounds alternate between the entry module as it is and the same module whose
 * handleSummary writes nothing (the floor: k6's own end), so that both see the same machine; with
 * COMPARE=<another checkout>, a third variant takes that checkout's entry module (its
 * `src/k6/entry.ts`). CPU is k6's user + system time from the signal to its last reading in /proc
 * (every 2 ms until it exits). Prints the medians and writes bench/results/runner-end.{json,md}
 * (not with COMPARE).
 *
 *   npm run bench:runner-end          (ROUNDS=6 per variant by default)
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { median } from '../src/compare/noise.ts';
import { startNodeTarget } from '../src/demo/target.ts';
import { cachedK6Path } from '../src/k6/binary.ts';
import { runnerEntryModule } from '../src/k6/entry.ts';
import { summaryTrendStats } from '../src/run/plan.ts';

const RESULTS = path.join(import.meta.dirname, 'results');
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const K6 = process.env.K6_BINARY ?? cachedK6Path();
const PORT = 6599;
/** The kernel's clock ticks per second (`getconf CLK_TCK`, 100 on Linux). */
const TICKS_PER_S = 100;

/** One way of writing the runner's summary. */
interface Variant {
  label: string;
  entry: typeof runnerEntryModule;
}

/** One measured end, in ms. */
interface End {
  exitMs: number;
  cpuMs: number;
  summaryBytes: number;
}

/** k6's user + system CPU time so far, in ms; undefined once it is gone. */
async function cpuMs(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of proc(5), 12 and 13 after the command.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

async function status(): Promise<number | undefined> {
  try {
    const r = await fetch(`http://127.0.0.1:${PORT}/v1/status`, { signal: AbortSignal.timeout(1000) });
    return ((await r.json()) as { data: { attributes: { status: number } } }).data.attributes.status;
  } catch {
    return undefined;
  }
}

async function runOnce(entryPath: string, dir: string): Promise<End> {
  const out = path.join(dir, 'stdout.txt');
  const fd = openSync(out, 'w');
  const k6 = spawn(
    K6,
    ['run', '--linger', '--address', `127.0.0.1:${PORT}`, '--no-usage-report', '--quiet', entryPath],
    {
      stdio: ['ignore', fd, 'ignore'],
      env: { ...process.env, K6_SUMMARY_TREND_STATS: summaryTrendStats(), K6D_SUMMARY_OUT: 'stdout' },
    },
  );
  closeSync(fd);
  const exited = new Promise<void>((resolve) => k6.once('exit', () => resolve()));
  for (;;) {
    if (((await status()) ?? 0) >= 9) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const before = (await cpuMs(k6.pid!)) ?? 0;
  const sent = performance.now();
  k6.kill('SIGTERM');
  let last = before;
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  while (!gone) {
    last = (await cpuMs(k6.pid!)) ?? last;
    await new Promise((r) => setTimeout(r, 2));
  }
  const exitMs = performance.now() - sent;
  return { exitMs, cpuMs: last - before, summaryBytes: (await readFile(out)).length };
}

async function main() {
  const dir = path.join(os.tmpdir(), `k6d-bench-runner-end-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const target = await startNodeTarget();
  const variants: Variant[] = [
    { label: 'summary', entry: runnerEntryModule },
    {
      label: 'no summary (floor)',
      entry: (options) => runnerEntryModule(options).replace(/return out \? .*;/, 'return {};'),
    },
  ];
  if (process.env.COMPARE) {
    const other = path.resolve(process.env.COMPARE);
    const { runnerEntryModule: theirs } = (await import(path.join(other, 'src/k6/entry.ts'))) as {
      runnerEntryModule: typeof runnerEntryModule;
    };
    variants.push({ label: `summary (${path.basename(other)})`, entry: theirs });
  }
  try {
    const script = path.join(dir, 'script.js');
    await writeFile(
      script,
      `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '3s' } } };
export default function () { http.get('${target.url}/api/items'); sleep(0.05); }
`,
    );
    const entries = await Promise.all(
      variants.map(async (v, i) => {
        const file = path.join(dir, `entry-${i}.js`);
        await writeFile(
          file,
          v.entry({ script, thresholds: { http_req_duration: ['max>=0'] }, runsDefault: true }),
        );
        return file;
      }),
    );
    const ends: End[][] = variants.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, v] of variants.entries()) {
        const end = await runOnce(entries[i]!, dir);
        ends[i]!.push(end);
        console.error(
          `round ${round + 1} ${v.label}: exit ${end.exitMs.toFixed(1)} ms after SIGTERM, CPU ${end.cpuMs.toFixed(0)} ms, stdout ${end.summaryBytes} bytes`,
        );
      }
    }
    const rows = variants.map((v, i) => ({
      variant: v.label,
      exitMs: median(ends[i]!.map((e) => e.exitMs)),
      cpuMs: median(ends[i]!.map((e) => e.cpuMs)),
      summaryBytes: median(ends[i]!.map((e) => e.summaryBytes)),
    }));
    for (const r of rows)
      console.log(
        `${r.variant}: SIGTERM -> exit ${r.exitMs.toFixed(1)} ms, CPU ${r.cpuMs.toFixed(0)} ms, summary ${(r.summaryBytes / 1024).toFixed(0)} KiB (medians of ${ROUNDS})`,
      );
    if (process.env.COMPARE) return;
    await writeFile(path.join(RESULTS, 'runner-end.json'), `${JSON.stringify({ rows }, null, 2)}\n`);
    await writeFile(
      path.join(RESULTS, 'runner-end.md'),
      [
        `# A runner's end (${new Date().toISOString()}, ${os.availableParallelism()} cores, medians of ${ROUNDS} rounds)`,
        '',
        "k6 (the pinned build) runs the runner entry module of a 3 s constant-vus test (2 VUs) with `--linger`; once its test has ended it gets SIGTERM. Time from the signal to its exit (its summary written), and its CPU time in that span (user + system, read from /proc every 2 ms, so a little under). `no summary` is the same module whose handleSummary writes nothing: k6's own end.",
        '',
        '| Variant | SIGTERM -> exit | CPU | Summary |',
        '|---|---:|---:|---:|',
        ...rows.map(
          (r) =>
            `| ${r.variant} | ${r.exitMs.toFixed(1)} ms | ${r.cpuMs.toFixed(0)} ms | ${(r.summaryBytes / 1024).toFixed(0)} KiB |`,
        ),
        '',
      ].join('\n'),
    );
  } finally {
    await target.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
