/**
 * Sizing figures for one runner: memory per VU and CPU per request of k6 as the product runs it
 * (the local backend: `--paused`, REST API, the dense summary trend stats), against a small HTTP
 * server on 127.0.0.1. The k6 process is sampled from /proc every 100 ms: its peak resident set
 * (VmHWM) and its CPU time (utime + stime). Prints the figures and writes
 * bench/results/sizing.json and bench/results/sizing.md.
 *
 *   npm run bench:sizing
 *
 * Linux only (/proc). The machine is shared and the target runs on the same cores: read the
 * figures as orders of magnitude for sizing, not as k6's limits.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { LocalBackend } from '../src/backends/local/backend.ts';
import { parseRunConfig } from '../src/config.ts';
import { type Logger, silentLogger } from '../src/log.ts';
import type { RunResult } from '../src/result/schema.ts';
import { runTest } from '../src/run/index.ts';
import { startShop } from '../test/examples/support/shop.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const quiet: Logger = { ...silentLogger, warning: (m) => console.error(`  warning: ${m}`) };
/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** `/page?kb=N` answers N KiB of text. */
async function startTarget(): Promise<{ url: string; stop(): Promise<void> }> {
  const pages = new Map<number, Buffer>();
  const server = http.createServer((req, res) => {
    const kb = Number(new URL(req.url ?? '/', 'http://t').searchParams.get('kb') ?? 1);
    const page = pages.get(kb) ?? Buffer.alloc(kb * 1024, 'k6 ');
    pages.set(kb, page);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(page);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface ProcessSample {
  peakRssKiB: number;
  cpuSeconds: number;
}

/** Samples every k6 child of this process until stopped: per pid, its largest peak RSS and CPU time. */
function sampleK6Children(): { stop(): Map<number, ProcessSample> } {
  const seen = new Map<number, ProcessSample>();
  const sample = () => {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        // Fields after the command name "(k6)": state ppid ... utime(14) stime(15).
        const close = stat.lastIndexOf(')');
        const comm = stat.slice(stat.indexOf('(') + 1, close);
        const fields = stat.slice(close + 2).split(' ');
        if (comm !== 'k6' || Number(fields[1]) !== process.pid) continue;
        const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS;
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
        // A process that has exited (a zombie) has no VmHWM any more: keep the largest figures seen.
        const before = seen.get(Number(entry));
        seen.set(Number(entry), {
          peakRssKiB: Math.max(before?.peakRssKiB ?? 0, Number(hwm?.[1] ?? 0)),
          cpuSeconds: Math.max(before?.cpuSeconds ?? 0, cpuSeconds),
        });
      } catch {
        // the process ended between readdir and read
      }
    }
  };
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      return seen;
    },
  };
}

interface Measured {
  result: RunResult;
  peakRssMiB: number;
  cpuSeconds: number;
}

async function measure(dir: string, name: string, script: string, k6Args: string[]): Promise<Measured> {
  const file = path.join(dir, `${name}.js`);
  await writeFile(file, script);
  const config = parseRunConfig({
    script: file,
    runners: 1,
    k6Args,
    resultPath: path.join(dir, `${name}.json`),
  });
  const sampler = sampleK6Children();
  const result = await runTest(config, {
    createBackend: (k6, work) => new LocalBackend(k6, work),
    log: quiet,
  });
  // The runner process of the run (preflight's k6 archive/inspect are short and small).
  const run = [...sampler.stop().values()].sort((a, b) => b.cpuSeconds - a.cpuSeconds)[0];
  if (!run) throw new Error(`${name}: no k6 process was sampled`);
  if (result.verdict !== 'passed') throw new Error(`${name}: ${result.failures.join('; ')}`);
  return { result, peakRssMiB: run.peakRssKiB / 1024, cpuSeconds: run.cpuSeconds };
}

/** Users that think: VUs each send one request per second, so memory grows with VUs, not load. */
function thinkingUsers(vus: number, kb: number, discard: boolean): string {
  return `
import http from 'k6/http';
import { check, sleep } from 'k6';
export const options = {
  discardResponseBodies: ${discard},
  scenarios: { users: { executor: 'constant-vus', vus: ${vus}, duration: '10s' } },
  thresholds: { checks: ['rate>0.99'] },
};
export default function () {
  check(http.get(__ENV.TARGET + '/page?kb=${kb}'), { 'status 200': (r) => r.status === 200 });
  sleep(1);
}
`;
}

/** Least-squares slope and intercept. */
function linearFit(points: Array<[number, number]>): { slope: number; intercept: number } {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const slope =
    points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) /
    points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return { slope, intercept: my - slope * mx };
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'k6d-sizing-'));
  const target = await startTarget();
  const args = ['-e', `TARGET=${target.url}`];
  try {
    console.error('memory per VU (1 KiB responses, 1 request per VU per second) ...');
    const memory = [];
    for (const vus of [100, 400, 1600]) {
      const m = await measure(dir, `vus-${vus}`, thinkingUsers(vus, 1, false), args);
      memory.push({ vus, peakRssMiB: m.peakRssMiB, requests: m.result.metrics.http_reqs!.values.count! });
    }
    const line = linearFit(memory.map((r) => [r.vus, r.peakRssMiB]));

    console.error('memory per VU of examples/user-journey.js ...');
    const shop = await startShop();
    const journey = [];
    try {
      for (const vus of [200, 800]) {
        const m = await measure(
          dir,
          `journey-${vus}`,
          readFileSync(path.join(ROOT, 'examples/user-journey.js'), 'utf8'),
          [...['-e', `BASE_URL=${shop.url}`, '-e', `VUS=${vus}`, '-e', 'RAMP=2s', '-e', 'HOLD=8s']],
        );
        journey.push({ vus, peakRssMiB: m.peakRssMiB, requests: m.result.metrics.http_reqs!.values.count! });
      }
    } finally {
      await shop.stop();
    }
    const journeyLine = linearFit(journey.map((r) => [r.vus, r.peakRssMiB]));

    console.error('response bodies (400 VUs, 256 KiB responses) ...');
    const bodies = [];
    for (const discard of [false, true]) {
      const m = await measure(dir, `bodies-${discard}`, thinkingUsers(400, 256, discard), args);
      bodies.push({ discardResponseBodies: discard, peakRssMiB: m.peakRssMiB });
    }

    console.error('CPU per request (16 VUs, no think time, 1 KiB responses) ...');
    const busy = await measure(
      dir,
      'cpu',
      `
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 16, duration: '10s' } } };
export default function () { http.get(__ENV.TARGET + '/page?kb=1'); }
`,
      args,
    );
    const requests = busy.result.metrics.http_reqs!.values.count!;
    const cpu = {
      vus: 16,
      requests,
      rps: busy.result.metrics.http_reqs!.values.rate!,
      k6CpuSeconds: busy.cpuSeconds,
      cpuMicrosPerRequest: (1e6 * busy.cpuSeconds) / requests,
      requestsPerCpuSecond: requests / busy.cpuSeconds,
    };

    const figures = {
      at: new Date().toISOString(),
      cores: os.availableParallelism(),
      memory: { rows: memory, mibPerVu: line.slope, baseMiB: line.intercept },
      journey: { rows: journey, mibPerVu: journeyLine.slope, baseMiB: journeyLine.intercept },
      bodies,
      cpu,
    };
    const md = markdown(figures);
    await mkdir(RESULTS, { recursive: true });
    await writeFile(path.join(RESULTS, 'sizing.json'), `${JSON.stringify(figures, null, 2)}\n`);
    await writeFile(path.join(RESULTS, 'sizing.md'), md);
    console.log(md);
  } finally {
    await target.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function markdown(f: {
  at: string;
  cores: number;
  memory: { rows: Array<{ vus: number; peakRssMiB: number }>; mibPerVu: number; baseMiB: number };
  journey: { rows: Array<{ vus: number; peakRssMiB: number }>; mibPerVu: number; baseMiB: number };
  bodies: Array<{ discardResponseBodies: boolean; peakRssMiB: number }>;
  cpu: {
    vus: number;
    requests: number;
    rps: number;
    cpuMicrosPerRequest: number;
    requestsPerCpuSecond: number;
  };
}): string {
  return [
    `# Runner sizing (${f.at}, ${f.cores} cores, k6 as one runner of the local backend)`,
    '',
    '## Memory per VU (1 KiB responses, each VU one request per second, 10 s)',
    '',
    '| VUs | Peak RSS of the runner |',
    '|---:|---:|',
    ...f.memory.rows.map((r) => `| ${r.vus} | ${r.peakRssMiB.toFixed(0)} MiB |`),
    '',
    `Least-squares fit: **${(f.memory.mibPerVu * 1024).toFixed(0)} KiB per VU** on top of ${f.memory.baseMiB.toFixed(0)} MiB.`,
    '',
    '## Memory per VU of examples/user-journey.js (login, browse, cart, checkout; think time 1-3 s)',
    '',
    '| VUs | Peak RSS of the runner |',
    '|---:|---:|',
    ...f.journey.rows.map((r) => `| ${r.vus} | ${r.peakRssMiB.toFixed(0)} MiB |`),
    '',
    `Slope: **${(f.journey.mibPerVu * 1024).toFixed(0)} KiB per VU** on top of ${f.journey.baseMiB.toFixed(0)} MiB.`,
    '',
    '## Response bodies (400 VUs, 256 KiB responses)',
    '',
    '| discardResponseBodies | Peak RSS of the runner |',
    '|---|---:|',
    ...f.bodies.map((b) => `| ${b.discardResponseBodies} | ${b.peakRssMiB.toFixed(0)} MiB |`),
    '',
    `## CPU per request (${f.cpu.vus} VUs, no think time, 1 KiB responses, target on the same cores)`,
    '',
    '| Requests | RPS | k6 CPU per request | Requests per CPU-second |',
    '|---:|---:|---:|---:|',
    `| ${f.cpu.requests} | ${f.cpu.rps.toFixed(0)} | ${f.cpu.cpuMicrosPerRequest.toFixed(1)} µs | ${f.cpu.requestsPerCpuSecond.toFixed(0)} |`,
    '',
  ].join('\n');
}

await main();
