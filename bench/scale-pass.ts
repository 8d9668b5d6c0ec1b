/**
 * One cold pass of the post-run path for bench/scale.ts, in a fresh process:
 *
 *   node bench/scale-pass.ts <dir> <runners> <thresholds JSON>
 *
 * `dir` holds `runner-<i>-summary.k6d.json` for every runner. Prints one JSON line: each stage's
 * wall ms, the total, the process CPU ms of the pass, and the ms the imports took (not counted).
 */
const importStart = performance.now();
const { readLogTail, readRunnerSummary } = await import('../src/backends/local/backend.ts');
const os = await import('node:os');
const path = await import('node:path');
const { parseThresholds } = await import('../src/k6/thresholds-parser.ts');
const { renderHtmlReport } = await import('../src/render/html/report.ts');
const { renderReport } = await import('../src/render/markdown.ts');
const { writeResultOrKeep } = await import('../src/result/file.ts');
const { assembleResult } = await import('../src/run/assemble.ts');
const { collectAll } = await import('../src/run/collect.ts');
const { planRun } = await import('../src/run/plan.ts');
const { writeFile } = await import('node:fs/promises');
type Runner = import('../src/backends/backend.ts').Runner;
type Preflight = import('../src/run/preflight.ts').Preflight;
const importMs = performance.now() - importStart;

const [dir, count, thresholdsJson] = process.argv.slice(2);
const n = Number(count);
const thresholds = parseThresholds(JSON.parse(thresholdsJson!));
const out = path.join(os.tmpdir(), `k6d-scale-pass-${process.pid}`);
const pre: Preflight = {
  archivePath: '/nonexistent/archive.tar',
  k6Version: 'v2.2.0',
  scriptHash: '0'.repeat(64),
  thresholds,
  maxVUs: n * 10,
  totalDurationS: 60,
  tags: {},
  runArgs: [],
  env: {},
  noThresholds: false,
  warnings: [],
  declaredContains: {},
  reads: { vu: false, vuIterations: false, iterationInTest: false, instance: false },
  options: {},
};
const plan = planRun({ runners: n, maxVUs: n * 10, extraPercentiles: [], userRunArgs: [], tags: {} });
// Runners as the local backend leaves them: a compact summary and a log each, read by the local
// backend's own functions, as its collect() reads them.
const runners = Array.from({ length: n }, (_, i) => {
  const file = (name: string) => path.join(dir!, `runner-${i}${name}`);
  return {
    index: i,
    collect: async () => ({
      summary: readRunnerSummary(file('-summary.k6d.json'), file('-summary.json')),
      logTail: await readLogTail(file('.log'), 20),
      insufficientVUs: 0,
    }),
  } as unknown as Runner;
});

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const collected = await collectAll(runners);
const t1 = performance.now();
const result = assembleResult(
  { script: 'bench.js', preflight: pre, plan, backend: { name: 'local' } },
  {
    launched: { runners, exits: runners.map(() => ({ code: 0 })) },
    start: { startedAtMs: 0, offsetsMs: runners.map(() => 0), skewMs: 0 },
    endedAtMs: 60_000,
    durationS: 60,
    failures: [],
    contains: {},
    vusSamples: [],
    collected,
  },
);
const t2 = performance.now();
await writeResultOrKeep(`${out}.json`, result, 'result');
const t3 = performance.now();
renderReport(result, { charts: true });
const t4 = performance.now();
await writeFile(`${out}.html`, renderHtmlReport({ result }));
const t5 = performance.now();
const cpu = process.cpuUsage(cpu0);
const { rm } = await import('node:fs/promises');
await rm(`${out}.json`, { force: true });
await rm(`${out}.html`, { force: true });
process.stdout.write(
  `${JSON.stringify({
    stages: { collect: t1 - t0, assemble: t2 - t1, write: t3 - t2, markdown: t4 - t3, html: t5 - t4 },
    totalMs: t5 - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    importMs,
  })}\n`,
);
