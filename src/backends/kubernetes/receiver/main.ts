/**
 * The interval receiver of a runner Pod: a Node program (bundled by scripts/build.mjs into
 * dist/interval-receiver.js, shipped in the run's ConfigMap) that runs as the Pod's native sidecar
 * and takes the Prometheus remote-write pushes of the runner's k6 (`experimental-prometheus-rw`
 * with native histograms) on 127.0.0.1, as the orchestrator's receiver does on the local backend
 * (src/run/interval-receiver.ts). It keeps each push's histogram deltas for the tracked metrics,
 * merged by key, and prints them (src/result/interval-lines.ts) when the kubelet ends it with
 * SIGTERM, which for a native sidecar comes after the runner's k6 exited (so k6's last push at
 * its own SIGTERM is in); the orchestrator reads that log once.
 *
 * Environment (manifests.ts `receiverContainer`): `K6D_IV_PORT` (port on 127.0.0.1),
 * `K6D_IV_METRICS` (JSON list of tracked metric keys, the thresholds'), `K6D_IV_PUSH_MS` (k6's push
 * interval, ms), `K6D_IV_MARKER` (a file in the Pod's scratch folder: there already means this
 * container was restarted, its earlier data lost).
 *
 * It never exits non-zero by itself: a failure costs only the per-interval chart (its end line
 * says why), never the runner.
 */

import { existsSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { decodeRemoteWrite } from '../../../k6/remote-write.ts';
import { type IntervalDelta, IntervalLatencyRecorder } from '../../../result/interval-latency.ts';
import { encodeIntervalLines, mergeByKey, type ReceiverEnd } from '../../../result/interval-lines.ts';

const env = process.env;
const port = Number(env.K6D_IV_PORT ?? '6567');
const marker = env.K6D_IV_MARKER;
const end: ReceiverEnd = { pushes: 0, refused: 0, restarted: false };
const kept: IntervalDelta[] = [];
let recorder: IntervalLatencyRecorder | undefined;
try {
  recorder = new IntervalLatencyRecorder({
    metrics: JSON.parse(env.K6D_IV_METRICS ?? '[]') as string[],
    pushIntervalMs: Number(env.K6D_IV_PUSH_MS ?? '1000'),
  });
  if (marker) {
    end.restarted = existsSync(marker);
    if (!end.restarted) writeFileSync(marker, `${process.pid}\n`);
  }
} catch (error) {
  end.error = `setup: ${(error as Error).message}`;
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const series = decodeRemoteWrite(Buffer.concat(chunks));
      end.pushes++;
      if (recorder && !end.restarted) {
        recorder.add(0, series);
        kept.push(...mergeByKey(recorder.drain()));
      }
      res.writeHead(204).end();
    } catch {
      end.refused++;
      res.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 60_000;
server.on('error', (error) => {
  end.error ??= `listen on 127.0.0.1:${port}: ${error.message}`;
  console.log(`k6d-iv-error ${end.error}`);
});
server.listen(port, '127.0.0.1', () => console.log(`k6d-iv-listening 127.0.0.1:${port}`));

let ended = false;
function finish(): void {
  if (ended) return;
  ended = true;
  server.close();
  let text: string;
  try {
    text = `${encodeIntervalLines(kept, end).join('\n')}\n`;
  } catch (error) {
    text = `k6d-iv-end ${JSON.stringify({ ...end, error: `print: ${(error as Error).message}` })}\n`;
  }
  process.stdout.write(text, () => process.exit(0));
}
process.on('SIGTERM', finish);
// Nothing thrown ends it: the runner's pushes would fail, and its restart would lose what it kept.
process.on('uncaughtException', (error) => {
  end.error ??= `uncaught: ${error.message}`;
});
process.on('SIGINT', finish);
