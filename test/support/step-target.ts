import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A target whose latency steps: shared by test/kubernetes/interval-latency.test.ts and
// bench/timeline-kubernetes.ts, which check latency per interval against its own record.

/** The step target: 10–15 ms until {@link STEP_AFTER_MS} after its first request, 40–60 ms from then. */
export interface StepTarget {
  url: string;
  /**
   * Per request: when it came and when its answer went (epoch ms of this machine), and how long it
   * was held (ms).
   */
  arrivals: Array<{ atMs: number; endMs: number; heldMs: number }>;
  /**
   * The runners' own samples posted to `/samples` (the script's record: when each request ended,
   * epoch ms of the runner's clock, and k6's `timings.duration`, ms).
   */
  samples: Array<{ endMs: number; durationMs: number }>;
  firstAtMs(): number | undefined;
  stepAtMs(): number | undefined;
  stop(): Promise<void>;
}

export const STEP_AFTER_MS = 10_000;

/** Starts it on `host` (a free port). */
export async function startStepTarget(host: string, stepAfterMs = STEP_AFTER_MS): Promise<StepTarget> {
  const arrivals: StepTarget['arrivals'] = [];
  let first: number | undefined;
  const samples: StepTarget['samples'] = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/samples') {
      // A runner's own record of its requests (the script's `[end ms, duration ms]` pairs),
      // answered 202 so that, with `responseCallback: http.expectedStatuses(200)`, this request
      // is not one of the `expected_response:true` samples.
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        for (const [endMs, durationMs] of JSON.parse(Buffer.concat(chunks).toString()) as Array<
          [number, number]
        >)
          samples.push({ endMs, durationMs });
        res.writeHead(202).end();
      });
      return;
    }
    const atMs = Date.now();
    const t0 = performance.now();
    first ??= atMs;
    // Spread over several of the histograms' buckets (9% wide each), as real latency is: a
    // delay that puts every sample in one bucket would leave its percentiles the bucket's width apart.
    const delay = atMs - first < stepAfterMs ? 10 + Math.random() * 5 : 40 + Math.random() * 20;
    req.resume();
    setTimeout(() => {
      res.end('ok', () => arrivals.push({ atMs, endMs: Date.now(), heldMs: performance.now() - t0 }));
    }, delay);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    arrivals,
    samples,
    firstAtMs: () => first,
    stepAtMs: () => (first === undefined ? undefined : first + stepAfterMs),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** k6's percentile of sorted values (rank q × (n − 1), linear between), as the recorder computes. */
export function percentile(sorted: readonly number[], q: number): number {
  const rank = q * (sorted.length - 1);
  const lo = Math.floor(rank);
  const a = sorted[lo]!;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)]!;
  return a + (b - a) * (rank - lo);
}
