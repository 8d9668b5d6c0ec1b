/**
 * The receiver of the runners' per-interval histograms on the local backend: an HTTP server on
 * 127.0.0.1 (a free port) that takes the Prometheus remote-write pushes of k6's
 * `experimental-prometheus-rw` output (runner `i` posts to `/<i>`) and feeds an
 * {@link IntervalLatencyRecorder}. Its figures join the timeline after the run.
 *
 * Not on Kubernetes (yet): runner Pods cannot reach an orchestrator on a GitHub runner; see
 * docs/how-it-works.md for the planned path (the barrier container receives on localhost, the
 * orchestrator reads it through the pod proxy).
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
  /** Adds the per-interval series to `timeline` (unchanged when no push held a histogram). */
  finish(timeline: Timeline, startedAtMs: number): Timeline;
  /** Stops the server (idempotent). */
  close(): Promise<void>;
}

/**
 * Starts the receiver for a local run, or returns undefined when the run cannot have one: a
 * non-local backend, the user's own `--out experimental-prometheus-rw` (k6 configures that
 * output from the environment only, so both would share one URL; the user's wins), or no free
 * port on 127.0.0.1 (a warning; the run goes on). Never throws.
 * @param totalDurationS the test's totalDuration, s: sets the adaptive interval.
 */
export async function startIntervalMetrics(
  plan: RunPlan,
  options: { backend: string; totalDurationS: number; thresholds: readonly Threshold[]; log: Logger },
): Promise<IntervalMetrics | undefined> {
  if (options.backend !== 'local') return undefined;
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
