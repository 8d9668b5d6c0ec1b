/**
 * Latency per interval on Kubernetes: real runs on the test cluster's real kubelets (each runner
 * Pod's interval receiver, a native sidecar on the Node image test/cluster/build.sh makes), against
 * a step target on the pod network's gateway (10–15 ms for half the test, then 40–60 ms). The raw
 * samples stay in the Pods, so the truth here is the target's own record: each interval's
 * p50/p90/p95/p99 of how long it held the requests whose answers went in that interval, plus the
 * network's overhead, measured as the median over intervals of k6's p50 minus the target's.
 * Then what the receiver costs: rounds of a 10 s test with and without it, alternated.
 * Prints the figures and writes bench/results/timeline-kubernetes.{json,md}.
 *
 *   npm run bench:timeline-kubernetes
 *
 * Environment: CLUSTER_POD_NET (default 10.234), CLUSTER_STATE_DIR (default
 * test/cluster/.state-bench-timeline), ROUNDS (rounds per side of the cost cell, default 3).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesBackend } from '../src/backends/kubernetes/backend.ts';
import { median } from '../src/compare/noise.ts';
import { parseRunConfig } from '../src/config.ts';
import { DEFAULTS } from '../src/inputs/defaults.ts';
import { type Logger, silentLogger } from '../src/log.ts';
import type { RunResult } from '../src/result/schema.ts';
import { runTest } from '../src/run/index.ts';
import { percentile, type StepTarget, startStepTarget } from '../test/support/step-target.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const STATE = process.env.CLUSTER_STATE_DIR ?? path.join(ROOT, 'test/cluster/.state-bench-timeline');
const POD_NET = process.env.CLUSTER_POD_NET ?? '10.234';
const ROUNDS = Number(process.env.ROUNDS ?? '3');
const PS = [
  ['p50', 0.5],
  ['p90', 0.9],
  ['p95', 0.95],
  ['p99', 0.99],
] as const;
const TARGET_ERROR = 0.05;

const stepScript = (durationS: number, vus: number) => `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: { steady: { executor: 'constant-vus', vus: ${vus}, duration: '${durationS}s', gracefulStop: '0s' } },
};
export default function () { http.get(__ENV.TARGET + '/'); sleep(0.02); }
`;

async function run(
  kc: KubeConfig,
  target: StepTarget,
  script: string,
  dir: string,
  receiverImage: string | undefined,
): Promise<{ result: RunResult; wallS: number; warnings: string[] }> {
  const warnings: string[] = [];
  const log: Logger = { ...silentLogger, warning: (m) => warnings.push(m) };
  target.arrivals.length = 0;
  const t0 = performance.now();
  const result = await runTest(
    parseRunConfig({
      script,
      runners: 2,
      k6Args: ['-e', `TARGET=${target.url}`],
      resultPath: path.join(dir, 'result.json'),
    }),
    {
      log,
      createBackend: () =>
        new KubernetesBackend({
          kc,
          namespace: 'default',
          runId: `b${Date.now().toString(36)}`,
          image: 'grafana/k6:2.2.0',
          ...(receiverImage ? { receiverImage } : {}),
          placement: {
            nodeSelector: { 'k6-distributed.test/pool': 'loadtest' },
            tolerations: [
              {
                key: 'k6-distributed.test/dedicated',
                operator: 'Equal',
                value: 'loadtest',
                effect: 'NoSchedule',
              },
            ],
            spread: 'one-per-node',
          },
          cleanup: 'always',
          scheduleTimeoutS: 60,
          activeDeadlineSeconds: 600,
          log,
        }),
    },
  );
  return { result, wallS: (performance.now() - t0) / 1000, warnings };
}

/** Per interval and percentile: k6's value against the target's plus the overhead, as a relative error. */
function compare(result: RunResult, target: StepTarget) {
  const latency = result.timeline?.latency;
  const series = latency?.metrics.find((m) => m.metric === 'http_req_duration{expected_response:true}');
  if (!latency || !series) throw new Error('the run has no latency per interval');
  const startedAtMs = Date.parse(result.startedAt);
  const intervalMs = latency.intervalS * 1000;
  const stepAt = target.stepAtMs()!;
  const rows = series.points.flatMap((p) => {
    const end = startedAtMs + p.tS * 1000;
    const begin = end - intervalMs;
    if (Math.abs(begin - stepAt) < intervalMs || Math.abs(end - stepAt) < intervalMs) return [];
    const held = target.arrivals
      .filter((a) => a.endMs >= begin && a.endMs < end)
      .map((a) => a.heldMs)
      .sort((x, y) => x - y);
    if (held.length < 20 || p.p50 === undefined) return [];
    return [{ p, held }];
  });
  const overheadMs = Math.max(0, median(rows.map(({ p, held }) => p.p50! - percentile(held, 0.5))));
  const errors = Object.fromEntries(
    PS.map(([name, q]) => {
      const e = rows.map(({ p, held }) => Math.abs((p[name]! - overheadMs) / percentile(held, q) - 1));
      return [
        name,
        {
          intervals: e.length,
          maxError: Math.max(...e),
          medianError: median(e),
          within5: e.filter((x) => x <= TARGET_ERROR).length / e.length,
        },
      ];
    }),
  );
  return {
    points: series.points.length,
    intervalS: latency.intervalS,
    firstPointS: series.points[0]!.tS,
    firstDataS: (target.firstAtMs()! - startedAtMs) / 1000,
    overheadMs,
    samples: median(rows.map((r) => r.held.length)),
    errors,
  };
}

async function main() {
  const dir = path.join(os.tmpdir(), `k6d-bench-timeline-k8s-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const env = { ...process.env, CLUSTER_STATE_DIR: STATE, CLUSTER_POD_NET: POD_NET, NODE_RUNTIME: 'kubelet' };
  execFileSync('bash', [path.join(ROOT, 'test/cluster/start.sh')], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const kc = new KubeConfig();
  kc.loadFromFile(path.join(STATE, 'kubeconfig'));
  const gateway = /K6D_POD_GATEWAY='([^']+)'/.exec(await readFile(path.join(STATE, 'env'), 'utf8'))![1]!;
  const load = os.loadavg()[0]!;
  try {
    // The error: a 60 s test (1 s intervals), latency stepping at 30 s.
    const target = await startStepTarget(gateway, 30_000);
    const long = path.join(dir, 'step-60.js');
    await writeFile(long, stepScript(60, 8));
    const accuracy = await run(kc, target, long, dir, DEFAULTS.intervalReceiverImage);
    const figures = compare(accuracy.result, target);
    console.log(
      `60 s, 2 runners: ${figures.points} points of ${figures.intervalS} s (first data at ${figures.firstDataS.toFixed(2)} s, first point ending at ${figures.firstPointS} s), overhead ${figures.overheadMs.toFixed(2)} ms, ${figures.samples} samples per interval`,
    );
    for (const [name] of PS) {
      const e = figures.errors[name]!;
      console.log(
        `  ${name}: ${e.intervals} intervals, max |error| ${(e.maxError * 100).toFixed(1)}%, median ${(e.medianError * 100).toFixed(1)}%, within 5%: ${(e.within5 * 100).toFixed(0)}%`,
      );
    }
    if (accuracy.warnings.length > 0) console.log(`  warnings: ${accuracy.warnings.join('; ')}`);
    await target.stop();

    // The cost: a 10 s test with and without the receiver, alternated.
    const short = await startStepTarget(gateway, 5_000);
    const shortScript = path.join(dir, 'step-10.js');
    await writeFile(shortScript, stepScript(10, 4));
    const sides = { with: [] as number[], without: [] as number[] };
    for (let round = 0; round < 2 * ROUNDS; round++) {
      const on = round % 2 === 0;
      const { wallS, result } = await run(
        kc,
        short,
        shortScript,
        dir,
        on ? DEFAULTS.intervalReceiverImage : undefined,
      );
      (on ? sides.with : sides.without).push(wallS);
      console.log(
        `  round ${round + 1} ${on ? 'with' : 'without'} the receiver: wall ${wallS.toFixed(2)} s, ${result.verdict}${on ? `, ${result.timeline?.latency ? 'latency per interval' : 'NO latency per interval'}` : ''}`,
      );
    }
    await short.stop();
    const cost = {
      withS: median(sides.with),
      withoutS: median(sides.without),
      rounds: ROUNDS,
      with: sides.with,
      without: sides.without,
    };
    console.log(
      `10 s test, 2 runners, wall median: ${cost.withS.toFixed(2)} s with the receiver, ${cost.withoutS.toFixed(2)} s without (${ROUNDS} rounds each, alternated; load average ${load.toFixed(2)} at the start)`,
    );
    const date = new Date().toISOString();
    const command = 'npm run bench:timeline-kubernetes';
    await mkdir(RESULTS, { recursive: true });
    await writeFile(
      path.join(RESULTS, 'timeline-kubernetes.json'),
      `${JSON.stringify({ date, command, loadAverage: load, accuracy: figures, cost }, null, 2)}\n`,
    );
    const rows = PS.map(([name]) => {
      const e = figures.errors[name]!;
      return `| ${name} | ${e.intervals} | ${(e.maxError * 100).toFixed(1)}% | ${(e.medianError * 100).toFixed(1)}% | ${(e.within5 * 100).toFixed(0)}% |`;
    });
    await writeFile(
      path.join(RESULTS, 'timeline-kubernetes.md'),
      [
        '# Latency per interval on Kubernetes',
        '',
        `\`${command}\`, ${date}, on the test cluster's real kubelets (2 shared cores; load average ${load.toFixed(2)} at the start).`,
        '',
        `A 60 s test of 2 runners (8 VUs) against a target on the pod network's gateway whose latency steps from 10–15 ms to 40–60 ms at 30 s; each runner Pod's interval receiver gave ${figures.points} points of ${figures.intervalS} s (target: about 60 or more), the first data at ${figures.firstDataS.toFixed(2)} s and the first point's interval ending at ${figures.firstPointS} s (never a point before the first data). The truth is the target's own record (the raw samples stay in the Pods): each interval's percentile of how long it held the requests whose answers went in it, plus the network's overhead, measured as the median of k6's p50 minus the target's over the intervals (${figures.overheadMs.toFixed(2)} ms). Intervals next to the step left out; median ${figures.samples} requests per interval.`,
        '',
        '| percentile | intervals | max \\|error\\| | median \\|error\\| | within ±5% (target) |',
        '| --- | ---: | ---: | ---: | ---: |',
        ...rows,
        '',
        `What the receiver costs: a 10 s test of 2 runners, wall time from runTest's call to its result, median of ${ROUNDS} rounds each, alternated: ${cost.withS.toFixed(2)} s with the receiver, ${cost.withoutS.toFixed(2)} s without (with: ${cost.with.map((s) => s.toFixed(2)).join(', ')}; without: ${cost.without.map((s) => s.toFixed(2)).join(', ')}).`,
        '',
      ].join('\n'),
    );
  } finally {
    execFileSync('bash', [path.join(ROOT, 'test/cluster/stop.sh')], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
