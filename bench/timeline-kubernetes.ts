/**
 * Latency per interval on Kubernetes: real runs on the test cluster's real kubelets (each runner
 * Pod's interval receiver, its last container, on the Node image test/cluster/build.sh makes), against
 * a step target on the pod network's gateway (10–15 ms for half the test, then 40–60 ms). k6's raw
 * samples stay in the Pods, so each VU keeps its own record of its requests (when each ended, and
 * k6's `timings.duration`, the value k6 records) and posts it to the target: each interval's
 * p50/p90/p95/p99 of `timeline.latency` is compared with k6's percentile of those raw samples, their
 * times moved by the backend's clock estimate, as the receiver's were (the test cluster's nodes
 * share this machine's clock).
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
import { DEDICATED_PLACEMENT } from '../test/support/placement.ts';
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
/** The end of the VUs' record left out, ms: 40 requests of the slow phase (~70 ms each) and a margin. */
const RECORD_TAIL_MS = 4_000;

/**
 * The step test: each VU also keeps its own record of its requests, as k6 times them (when each
 * ended, `timings.duration`), and posts it to the target every 40 requests, answered 202 so that
 * the post is not an `expected_response:true` sample: the raw samples, which stay in the Pods.
 */
const stepScript = (durationS: number, vus: number) => `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: { steady: { executor: 'constant-vus', vus: ${vus}, duration: '${durationS}s', gracefulStop: '0s' } },
};
const record = [];
export default function () {
  const res = http.get(__ENV.TARGET + '/');
  record.push([Date.now(), res.timings.duration]);
  if (record.length >= 40) {
    http.post(__ENV.TARGET + '/samples', JSON.stringify(record.splice(0)), {
      responseCallback: http.expectedStatuses(200),
    });
  }
  sleep(0.02);
}
`;

async function run(
  kc: KubeConfig,
  target: StepTarget,
  script: string,
  dir: string,
  receiverImage: string | undefined,
): Promise<{ result: RunResult; wallS: number; warnings: string[]; aheadMs: number }> {
  const warnings: string[] = [];
  const log: Logger = { ...silentLogger, warning: (m) => warnings.push(m) };
  target.arrivals.length = 0;
  target.samples.length = 0;
  const t0 = performance.now();
  let backend: KubernetesBackend | undefined;
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
        (backend = new KubernetesBackend({
          kc,
          namespace: 'default',
          runId: `b${Date.now().toString(36)}`,
          image: 'grafana/k6:2.2.0',
          ...(receiverImage ? { receiverImage } : {}),
          placement: DEDICATED_PLACEMENT,
          cleanup: 'always',
          scheduleTimeoutS: 60,
          activeDeadlineSeconds: 600,
          log,
        })),
    },
  );
  // The backend's estimate of how far this clock is ahead of the nodes': the result's start and
  // the per-interval samples were moved by it, so the target's record is moved by it too (the
  // test cluster's nodes share this machine's clock).
  const aheadMs = backend?.clockAheadMs() ?? 0;
  return { result, wallS: (performance.now() - t0) / 1000, warnings, aheadMs };
}

/**
 * Per interval and percentile: k6's value from the receiver against the raw samples of the
 * interval (the VUs' own record, moved by the clock estimate as the receiver's were), as a relative
 * error; the record's last {@link RECORD_TAIL_MS} (each VU's last, unposted requests) and intervals
 * of fewer than 20 samples left out.
 */
function compare(result: RunResult, target: StepTarget, aheadMs: number) {
  const latency = result.timeline?.latency;
  const series = latency?.metrics.find((m) => m.metric === 'http_req_duration{expected_response:true}');
  if (!latency || !series) throw new Error('the run has no latency per interval');
  const startedAtMs = Date.parse(result.startedAt);
  const intervalMs = latency.intervalS * 1000;
  // Each VU's last requests (fewer than 40) are never posted: the record's last seconds are short.
  const completeUntilMs = Math.max(...target.samples.map((s) => s.endMs)) + aheadMs - RECORD_TAIL_MS;
  const rows = series.points.flatMap((p) => {
    const end = startedAtMs + p.tS * 1000;
    const begin = end - intervalMs;
    const raw = target.samples
      .filter((s) => s.endMs + aheadMs >= begin && s.endMs + aheadMs < end)
      .map((s) => s.durationMs)
      .sort((x, y) => x - y);
    if (end > completeUntilMs || raw.length < 20 || p.p50 === undefined) return [];
    return [{ p, raw }];
  });
  const errors = Object.fromEntries(
    PS.map(([name, q]) => {
      const e = rows.map(({ p, raw }) => Math.abs(p[name]! / percentile(raw, q) - 1));
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
    compared: rows.length,
    intervalS: latency.intervalS,
    firstPointS: series.points[0]!.tS,
    firstDataS: (Math.min(...target.samples.map((s) => s.endMs)) + aheadMs - startedAtMs) / 1000,
    aheadMs,
    samples: median(rows.map((r) => r.raw.length)),
    // How far the receiver's counts are from the record's: a push counts whole in the interval
    // holding its span's middle, so samples near an edge can land in the neighbour.
    countGap: median(rows.map((r) => Math.abs(r.p.count - r.raw.length) / r.raw.length)),
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
    const figures = compare(accuracy.result, target, accuracy.aheadMs);
    console.log(
      `60 s, 2 runners: ${figures.points} points of ${figures.intervalS} s (first data at ${figures.firstDataS.toFixed(2)} s, first point ending at ${figures.firstPointS} s; clock estimate ${figures.aheadMs.toFixed(0)} ms), ${figures.compared} intervals compared, ${figures.samples} samples per interval (median), counts ${(figures.countGap * 100).toFixed(1)}% apart (median)`,
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
        `A 60 s test of 2 runners (8 VUs) against a target on the pod network's gateway whose latency steps from 10–15 ms to 40–60 ms at 30 s; each runner Pod's interval receiver gave ${figures.points} points of ${figures.intervalS} s (target: about 60 or more), the first data at ${figures.firstDataS.toFixed(2)} s and the first point's interval ending at ${figures.firstPointS} s (never a point before the first data). The truth is k6's raw samples: k6's own samples stay in the Pods, so each VU keeps a record of its requests (when each ended, and \`timings.duration\`, the value k6 records) and posts it to the target (answered 202, so the post is not an \`expected_response:true\` sample); each interval's percentile as k6 computes it, the record's times moved by the backend's clock estimate (${figures.aheadMs.toFixed(0)} ms, by which the samples and the run's start were moved: the test cluster's nodes share this machine's clock). ${figures.compared} intervals compared (the record's last ${RECORD_TAIL_MS / 1000} s, where each VU's last, unposted requests are missing, left out); median ${figures.samples} samples per interval, the receiver's count of an interval ${(figures.countGap * 100).toFixed(1)}% from the record's (median: a push counts whole in the interval holding its span's middle).`,
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
