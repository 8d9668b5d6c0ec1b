/**
 * One cold pass of the post-run path for bench/scale.ts, in a fresh process:
 *
 *   node bench/scale-pass.ts <dir> <runners> <thresholds JSON> [<checkout>]
 *
 * `dir` holds `runner-<i>-summary.k6d.json` and `runner-<i>.log` for every runner. The path's code
 * is imported from `checkout` (default: this one), so the same pass times another commit's code
 * (bench/scale.ts `SCALE_BASELINE`). Prints one JSON line: each stage's wall ms and process CPU ms,
 * the totals, and the ms the imports took (not counted), and the stage boundaries
 * (`process.hrtime` ns, to cut a `--cpu-prof` profile by stage).
 */
const importStart = performance.now();
const [dir, count, thresholdsJson, checkout] = process.argv.slice(2);
const path = await import('node:path');
const src = (file: string) => path.join(checkout ?? path.join(import.meta.dirname, '..'), 'src', file);
const { readLogTail, readRunnerSummary } = await import(src('backends/local/backend.ts'));
const os = await import('node:os');
const { parseThresholds } = await import(src('k6/thresholds-parser.ts'));
const { renderHtmlReport } = await import(src('render/html/report.ts'));
const { renderReport } = await import(src('render/markdown.ts'));
const { writeResultOrKeep } = await import(src('result/file.ts'));
const { assembleResult } = await import(src('run/assemble.ts'));
const { collectAll } = await import(src('run/collect.ts'));
const { planRun } = await import(src('run/plan.ts'));
const { rm, writeFile } = await import('node:fs/promises');
type Runner = import('../src/backends/backend.ts').Runner;
type Preflight = import('../src/run/preflight.ts').Preflight;
const importMs = performance.now() - importStart;

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

/** Wall ms, CPU ms and hrtime at each stage boundary. */
const marks: Array<{ wall: number; cpu: number; ns: bigint }> = [];
const mark = () => {
  const cpu = process.cpuUsage();
  marks.push({ wall: performance.now(), cpu: (cpu.user + cpu.system) / 1000, ns: process.hrtime.bigint() });
};
mark();
const collected = await collectAll(runners);
mark();
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
mark();
await writeResultOrKeep(`${out}.json`, result, 'result');
mark();
renderReport(result, { charts: true });
mark();
await writeFile(`${out}.html`, renderHtmlReport({ result }));
mark();
await rm(`${out}.json`, { force: true });
await rm(`${out}.html`, { force: true });
const names = ['collect', 'assemble', 'write', 'markdown', 'html'];
const per = (key: 'wall' | 'cpu') =>
  Object.fromEntries(names.map((name, i) => [name, marks[i + 1]![key] - marks[i]![key]]));
process.stdout.write(
  `${JSON.stringify({
    stages: per('wall'),
    cpuStages: per('cpu'),
    totalMs: marks.at(-1)!.wall - marks[0]!.wall,
    cpuMs: marks.at(-1)!.cpu - marks[0]!.cpu,
    importMs,
    marksNs: marks.map((m) => String(m.ns)),
  })}\n`,
);
