/**
 * The receiver of the runners' per-interval histograms.
 * - Local backend: an HTTP server on 127.0.0.1 (a free port) that takes the Prometheus
 *   remote-write pushes of k6's `experimental-prometheus-rw` output (runner `i` posts to `/<i>`)
 *   and feeds an {@link IntervalLatencyRecorder}.
 * - Kubernetes: runner Pods cannot reach an orchestrator on a GitHub runner, so each Pod has its
 *   own receiver beside k6 (src/backends/kubernetes/receiver/), whose deltas the backend reads from
 *   its log once at the end ({@link IntervalMetrics.gather}).
 * Either way, its figures join the timeline after the run (docs/how-it-works.md).
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Runner } from '../backends/backend.ts';
import { decodeRemoteWrite } from '../k6/remote-write.ts';
import type { Threshold } from '../k6/thresholds-parser.ts';
import type { Logger } from '../log.ts';
import { REMOTE_WRITE_OUTPUT, type RunPlan } from '../plan.ts';
import { IntervalLatencyRecorder, latencyIntervals } from '../result/interval-latency.ts';
import type { Timeline } from '../result/timeline-schema.ts';

/** A started receiver. */
export interface IntervalMetrics {
  /** The plan with {@link RunPlan.intervalMetrics} set to this receiver. */
  plan: RunPlan;
  /**
   * Reads the deltas the runners' own receivers kept (Kubernetes: {@link Runner.intervalDeltas});
   * nothing for runners without one (local). Call after the runners ended, before the cleanup.
   * Never rejects.
   */
  gather(runners: readonly Runner[]): Promise<void>;
  /**
   * Adds the per-interval series to `timeline` (unchanged when no push held a histogram, or when
   * some runner's receiver failed: warned about once, naming it).
   */
  finish(timeline: Timeline, startedAtMs: number): Timeline;
  /** Stops the server (idempotent). */
  close(): Promise<void>;
}

/**
 * Starts the receiver for a run, or returns undefined when the run cannot have one: the user's own `--out experimental-prometheus-rw` (k6 configures that
 * output from the environment only, so both would share one URL; the user's wins), or no free
 * port on 127.0.0.1 (a warning; the run goes on). Never throws.
 * @param totalDurationS the test's totalDuration, s: sets the adaptive interval.
 */
export async function startIntervalMetrics(
  plan: RunPlan,
  options: { backend: string; totalDurationS: number; thresholds: readonly Threshold[]; log: Logger },
): Promise<IntervalMetrics | undefined> {
  // The user's own output, by flag (`--out`, `-o`) or by k6's K6_OUT.
  const outs = [...plan.userRunArgs, plan.env.K6_OUT ?? '', process.env.K6_OUT ?? ''];
  if (outs.some((arg) => arg.includes(REMOTE_WRITE_OUTPUT))) {
    options.log.info(
      `timeline: your --out ${REMOTE_WRITE_OUTPUT} keeps its URL, so latency per interval is not recorded`,
    );
    return undefined;
  }
  const { intervalMs, pushIntervalMs } = latencyIntervals(options.totalDurationS);
  const recorder = new IntervalLatencyRecorder({
    metrics: options.thresholds.map((t) => t.metric),
    pushIntervalMs,
  });
  if (options.backend !== 'local') {
    return {
      plan: {
        ...plan,
        intervalMetrics: {
          // The backend's receiver sets the URL (Kubernetes: 127.0.0.1 inside each runner Pod).
          url: 'http://127.0.0.1',
          pushIntervalMs,
          metrics: options.thresholds.map((t) => t.metric),
        },
      },
      ...gathered(recorder, intervalMs, options.log),
      close: async () => {},
    };
  }
  let warned = false;
  const server = http.createServer((req, res) => {
    const runner = Number(req.url?.slice(1));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        if (req.method !== 'POST' || !Number.isInteger(runner)) throw new Error(`${req.method} ${req.url}`);
        recorder.add(runner, decodeRemoteWrite(Buffer.concat(chunks)));
        res.writeHead(204).end();
      } catch (error) {
        if (!warned)
          options.log.warning(`timeline: a runner's push was refused: ${(error as Error).message}`);
        warned = true;
        res.writeHead(400).end();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
  } catch (error) {
    // The run goes on without it: the timeline keeps the since-start band.
    options.log.warning(
      `timeline: no latency per interval (no port on 127.0.0.1: ${(error as Error).message})`,
    );
    return undefined;
  }
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    plan: { ...plan, intervalMetrics: { url: `http://127.0.0.1:${port}`, pushIntervalMs } },
    gather: async () => {},
    finish(timeline, startedAtMs) {
      const latency = recorder.series(startedAtMs, intervalMs);
      return latency ? { ...timeline, latency } : timeline;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/**
 * {@link IntervalMetrics.gather} and `finish` for runners with their own receivers: every runner's
 * deltas, or none at all (a series missing some runners' samples would show their latency as the
 * others'), with one warning naming each runner whose receiver failed.
 */
function gathered(
  recorder: IntervalLatencyRecorder,
  intervalMs: number,
  log: Logger,
): Pick<IntervalMetrics, 'gather' | 'finish'> {
  const missing: string[] = [];
  return {
    async gather(runners) {
      const read = await Promise.all(
        runners.map((r) =>
          r.intervalDeltas?.().catch((error: unknown) => ({
            missing: `runner ${r.index}'s interval receiver: ${(error as Error).message}`,
          })),
        ),
      );
      for (const got of read) {
        if (!got) continue;
        if ('missing' in got) missing.push(got.missing);
        else {
          try {
            recorder.addDeltas(got.deltas);
          } catch (error) {
            missing.push((error as Error).message);
          }
        }
      }
    },
    finish(timeline, startedAtMs) {
      if (missing.length > 0) {
        log.warning(
          `timeline: no latency per interval (the chart keeps the since-start band): ${missing.join('; ')}`,
        );
        return timeline;
      }
      const latency = recorder.series(startedAtMs, intervalMs);
      return latency ? { ...timeline, latency } : timeline;
    },
  };
}
