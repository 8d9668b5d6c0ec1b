import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { KubernetesBackend } from '../../src/backends/kubernetes/backend.ts';
import { CONTAINERS, LABELS } from '../../src/backends/kubernetes/names.ts';
import type { KubernetesBackendOptions } from '../../src/backends/kubernetes/options.ts';
import { parseRunConfig } from '../../src/config.ts';
import { DEFAULTS } from '../../src/inputs/defaults.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { runTest } from '../../src/run/index.ts';
import { tempDir, writeScript } from '../support/cli.ts';
import { DEDICATED_PLACEMENT } from '../support/placement.ts';
import { percentile, type StepTarget, startStepTarget } from '../support/step-target.ts';
import { leftovers } from './support/objects.ts';

// Latency per interval on Kubernetes, end to end on the test cluster's real kubelets and
// containerd: each runner Pod's interval receiver (its last container, running the Node image that
// test/cluster/build.sh makes under the input's default name) takes its k6's native histograms,
// prints them at its end, and the run's timeline gets them. The target, on the pod network's
// gateway, answers in 10 to 15 ms for the first 10 s of the test and in 40 to 60 ms after; it records when
// each request came and how long it held it, so each interval's p95 is checked against the target's
// own figure of that interval.

const STATE = process.env.CLUSTER_STATE_DIR!;
const kc = new KubeConfig();
let core: CoreV1Api;

let target: StepTarget;

beforeAll(async () => {
  kc.loadFromFile(process.env.KUBECONFIG!);
  core = kc.makeApiClient(CoreV1Api);
  target = await startStepTarget(process.env.K6D_POD_GATEWAY!);
});
afterAll(async () => {
  await target.stop();
});
afterEach(async () => {
  expect(await leftovers(kc)).toEqual([]);
});

interface Run {
  result?: RunResult;
  error?: Error;
  logs: string[];
  /**
   * The backend's estimate of how far this clock is ahead of the nodes' (ms): the run's start and
   * the per-interval samples were moved by it, so the target's record is moved by it too to
   * compare (the test cluster's nodes share this machine's clock).
   */
  aheadMs: number;
}

async function run(
  options: Partial<KubernetesBackendOptions>,
  onStarted?: (pods: V1Pod[]) => Promise<void>,
): Promise<Run> {
  const runId = `t${Date.now().toString(36)}`;
  const logs: string[] = [];
  let started: Promise<void> | undefined;
  const log = {
    info: (m: string) => {
      logs.push(m);
      if (onStarted && m.startsWith('started ')) {
        started = core
          .listNamespacedPod({ namespace: 'default', labelSelector: `${LABELS.runId}=${runId}` })
          .then((list) => onStarted(list.items));
      }
    },
    warning: (m: string) => logs.push(`warning: ${m}`),
    error: (m: string) => logs.push(`error: ${m}`),
    debug: () => {},
  };
  const out: Run = { logs, aheadMs: 0 };
  let backend: KubernetesBackend | undefined;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), 150_000);
  onTestFailed(() => console.log(`run ${runId}:\n${logs.join('\n')}`));
  target.arrivals.length = 0;
  try {
    out.result = await runTest(
      parseRunConfig({
        script,
        runners: 2,
        k6Args: ['-e', `TARGET=${target.url}`],
        resultPath: path.join(tempDir('k6d-k8s-iv-'), 'result.json'),
        startTimeoutS: 90,
      }),
      {
        log,
        createBackend: () =>
          (backend = new KubernetesBackend({
            kc,
            namespace: 'default',
            runId,
            image: 'grafana/k6:2.2.0',
            receiverImage: DEFAULTS.intervalReceiverImage,
            placement: DEDICATED_PLACEMENT,
            cleanup: 'always',
            scheduleTimeoutS: 20,
            activeDeadlineSeconds: 600,
            log,
            ...options,
          })),
        signal: deadline.signal,
      },
    );
  } catch (error) {
    out.error = error as Error;
  } finally {
    clearTimeout(timer);
  }
  await started;
  out.aheadMs = backend?.clockAheadMs() ?? 0;
  return out;
}

// 20 s at 4 VUs per runner, a request every ~32 ms (10–15 ms answer, 20 ms sleep) then ~70 ms. No
// graceful stop: the test's totalDuration (k6 inspect), which sets the interval, is its 20 s.
const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: { steady: { executor: 'constant-vus', vus: 8, duration: '20s', gracefulStop: '0s' } },
  thresholds: { http_req_duration: ['p(95)<1000'] },
};
export default function () { http.get(__ENV.TARGET + '/'); sleep(0.02); }
`);

describe('latency per interval on Kubernetes', () => {
  it('per-interval p95 follows a 10–15 ms → 40–60 ms step within the bucket error and the network overhead, from the first data on, about 60 points or more', async () => {
    const { result, error, logs, aheadMs } = await run({});
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
    expect(logs.filter((l) => l.startsWith('warning: timeline'))).toEqual([]);
    const latency = result!.timeline?.latency;
    expect(latency?.source).toBe('prometheus-rw-native-histograms');
    const series = latency!.metrics.find((m) => m.metric === 'http_req_duration{expected_response:true}')!;
    // The threshold's metric is tracked too.
    expect(latency!.metrics.map((m) => m.metric)).toContain('http_req_duration');
    const startedAtMs = Date.parse(result!.startedAt);
    const intervalMs = latency!.intervalS * 1000;
    expect(intervalMs).toBe(250);
    // Adaptive resolution: 20 s in 250 ms intervals.
    expect(series.points.length).toBeGreaterThanOrEqual(60);
    // Never a point before the first data: the first interval holds samples and ends after the
    // target's first request (this machine's clock, as the result's start).
    const first = series.points[0]!;
    expect(first.count).toBeGreaterThan(0);
    expect(startedAtMs + first.tS * 1000).toBeGreaterThan(target.firstAtMs()! + aheadMs);
    // Every sample of every runner is in: the intervals' counts add up to k6's own count (the
    // target's may have one more: a request the test's end cut short, answered but not counted).
    const total = series.points.reduce((a, p) => a + p.count, 0);
    expect(total).toBe(result!.metrics.http_req_duration!.values.count);

    // Per interval: the target's own p95 and p50 of the requests that came in it.
    const stepAt = target.stepAtMs()! + aheadMs;
    const rows = series.points.flatMap((p) => {
      const end = startedAtMs + p.tS * 1000;
      const begin = end - intervalMs;
      // Away from the step by an interval (the clocks' estimate and a request's way blur edges).
      if (Math.abs(begin - stepAt) < intervalMs || Math.abs(end - stepAt) < intervalMs) return [];
      // By when the answer went: k6 times a request's sample at its end (httpext/tracer.go).
      const held = target.arrivals
        .filter((a) => a.endMs + aheadMs >= begin && a.endMs + aheadMs < end)
        .map((a) => a.heldMs)
        .sort((x, y) => x - y);
      if (held.length < 20 || p.p95 === undefined) return [];
      return [
        {
          tS: p.tS,
          before: end < stepAt,
          p95: p.p95,
          p50: p.p50!,
          target95: percentile(held, 0.95),
          target50: percentile(held, 0.5),
        },
      ];
    });
    const before = rows.filter((r) => r.before);
    const after = rows.filter((r) => !r.before);
    expect(before.length).toBeGreaterThan(20);
    expect(after.length).toBeGreaterThan(20);
    // The network's own overhead, measured: the median over intervals of k6's p50 minus the target's.
    const gaps = rows.map((r) => r.p50 - r.target50).sort((x, y) => x - y);
    const overheadMs = Math.max(0, percentile(gaps, 0.5));
    console.log(
      `interval latency: ${series.points.length} points of ${intervalMs} ms, clock estimate ${aheadMs.toFixed(0)} ms, overhead ${overheadMs.toFixed(2)} ms; ` +
        `before the step p95 ${before.map((r) => `${r.p95}/${r.target95.toFixed(1)}`).join(' ')}; ` +
        `after ${after.map((r) => `${r.p95}/${r.target95.toFixed(1)}`).join(' ')}`,
    );
    expect(overheadMs).toBeLessThan(5);
    const off = rows.filter(
      (r) => r.p95 < r.target95 * 0.95 - 0.5 || r.p95 > r.target95 * 1.05 + overheadMs + 1,
    );
    // Most intervals within the bucket error (±5%) plus the overhead (and 1 ms of jitter): a busy
    // 2-core host stalls a request now and then, and an interval's p95 of 30 to 60 requests is its
    // second or third slowest.
    expect(off.length).toBeLessThanOrEqual(Math.ceil(rows.length * 0.15));
    // The typical interval well within it.
    const median = (xs: number[]) =>
      percentile(
        [...xs].sort((x, y) => x - y),
        0.5,
      );
    expect(Math.abs(median(rows.map((r) => (r.p95 - overheadMs) / r.target95 - 1)))).toBeLessThan(0.05);
    // And the step itself.
    expect(median(before.map((r) => r.p95))).toBeLessThan(18);
    expect(median(after.map((r) => r.p95))).toBeGreaterThan(50);
  });

  it('a receiver killed during the run costs only the per-interval chart: a warning names the runner, the run is judged', async () => {
    const { result, error, logs } = await run({}, async (pods) => {
      // SIGKILL to runner 0's receiver process, from the node's containerd (restartPolicy Never:
      // it stays dead, and the runner's k6 goes on, its pushes refused).
      const pod = pods.find((p) => p.metadata?.labels?.[LABELS.runner] === '0')!;
      const id = pod
        .status!.containerStatuses!.find((c) => c.name === CONTAINERS.receiver)!
        .containerID!.replace('containerd://', '');
      const socket = path.join(STATE, 'nodes', pod.spec!.nodeName!, 'containerd.sock');
      execFileSync('ctr', ['--address', socket, '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id]);
    });
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
    expect(result!.timeline?.latency).toBeUndefined();
    expect(logs.filter((l) => l.startsWith('warning: timeline'))).toEqual([
      expect.stringMatching(/no latency per interval .*runner 0's interval receiver printed no end line/),
    ]);
  });

  it('without a receiver image the run has no receiver, and the timeline keeps its since-start band', async () => {
    const { result, error, logs } = await run({ receiverImage: undefined }, async (pods) => {
      for (const pod of pods) expect(pod.spec!.containers.map((c) => c.name)).toEqual(['k6', 'barrier']);
    });
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
    expect(result!.timeline?.latency).toBeUndefined();
    expect(result!.timeline?.points.length).toBeGreaterThan(0);
    expect(logs.filter((l) => l.startsWith('warning: timeline'))).toEqual([]);
  });

  it('an interval receiver image that cannot be pulled does not hold the runners up: a warning names it, the run is judged', async () => {
    // On the test cluster's registry, without its pull secret: refused (401) at once.
    const { result, error, logs } = await run({ receiverImage: `${process.env.K6D_REGISTRY}/k6d/missing:1` });
    expect(error).toBeUndefined();
    expect(result!.verdict).toBe('passed');
    expect(target.arrivals.length).toBeGreaterThan(0);
    expect(result!.timeline?.latency).toBeUndefined();
    expect(logs.filter((l) => l.startsWith('warning: timeline'))).toEqual([
      expect.stringMatching(
        /no latency per interval .*runner 0's interval receiver never started: (ErrImagePull|ImagePullBackOff).*runner 1's interval receiver never started/,
      ),
    ]);
  });
});
