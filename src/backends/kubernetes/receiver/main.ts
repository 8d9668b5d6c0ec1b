/**
 * The interval receiver of a runner Pod: a Node program (bundled by scripts/build.mjs into
 * dist/interval-receiver.cjs, shipped in the run's ConfigMap) that runs as a container beside k6
 * and takes the Prometheus remote-write pushes of the runner's k6
 * (`experimental-prometheus-rw` with native histograms) on 127.0.0.1, as the orchestrator's
 * receiver does on the local backend (src/run/interval-receiver.ts). It keeps each push's
 * histogram deltas for the tracked metrics, merged by key, and prints them
 * (src/result/interval-lines.ts) once the runner's k6 is gone, then exits 0; the orchestrator reads
 * that log once.
 *
 * "k6 is gone": none of its connections is open (k6 pushes on keep-alive connections, which its
 * exit closes, after its last push at its own SIGTERM) and its REST API port, seen open before,
 * refuses, twice {@link QUIET_MS} apart. Looked at whenever a connection closes, every {@link CHECK_MS}, and at SIGTERM (all of
 * the Pod's containers get it at once when the Pod is deleted); at SIGTERM it prints after
 * {@link SIGTERM_WAIT_MS} at the latest, within the Pod's grace period.
 *
 * Environment (manifests.ts `receiverContainer`): `K6D_IV_PORT` (port on 127.0.0.1),
 * `K6D_IV_RUNNER_PORT` (k6's REST API port), `K6D_IV_METRICS` (JSON list of tracked metric keys, the
 * thresholds'), `K6D_IV_PUSH_MS` (k6's push interval, ms).
 *
 * It never exits non-zero by itself: a failure costs only the per-interval chart (its end line
 * says why), never the runner.
 */

import http from 'node:http';
import net from 'node:net';
import { decodeRemoteWrite } from '../../../k6/remote-write.ts';
import { type IntervalDelta, IntervalLatencyRecorder } from '../../../result/interval-latency.ts';
import { encodeIntervalLines, mergeByKey, type ReceiverEnd } from '../../../result/interval-lines.ts';

/** How often it looks whether k6 is gone, ms. */
const CHECK_MS = 500;
/** How long k6 must look gone before it prints, ms. */
const QUIET_MS = 150;
/** The longest it waits for k6 to go after SIGTERM, ms (the Pod's grace period is 30 s). */
const SIGTERM_WAIT_MS = 20_000;

const env = process.env;
const port = Number(env.K6D_IV_PORT ?? '6567');
const runnerPort = Number(env.K6D_IV_RUNNER_PORT ?? '6565');
const end: ReceiverEnd = { pushes: 0, refused: 0 };
const kept: IntervalDelta[] = [];
let recorder: IntervalLatencyRecorder | undefined;
try {
  recorder = new IntervalLatencyRecorder({
    metrics: JSON.parse(env.K6D_IV_METRICS ?? '[]') as string[],
    pushIntervalMs: Number(env.K6D_IV_PUSH_MS ?? '1000'),
  });
} catch (error) {
  end.error = `setup: ${(error as Error).message}`;
}

let connections = 0;
const server = http.createServer((req, res) => {
  // The barrier container's look whether it listens (barrier/script.ts): not a push, and its
  // connection closed, so that the open ones are k6's alone.
  if (req.method !== 'POST') {
    req.resume();
    res.writeHead(204, { connection: 'close' }).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const series = decodeRemoteWrite(Buffer.concat(chunks));
      end.pushes++;
      if (recorder) {
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
server.on('connection', (socket) => {
  connections++;
  socket.on('close', () => {
    connections--;
    if (connections === 0) void check();
  });
});
server.on('error', (error) => {
  end.error ??= `listen on 127.0.0.1:${port}: ${error.message}`;
  console.log(`k6d-iv-error ${end.error}`);
});
// Whether it is late is looked at first, then it listens: k6 cannot have started in between
// (the barrier says ready only once it listens, barrier/script.ts).
void lateCheck().then(() =>
  server.listen(port, '127.0.0.1', () => console.log(`k6d-iv-listening 127.0.0.1:${port}`)),
);

/**
 * Marks the receiver late when the runner's test has already started as it is about to listen:
 * k6's `GET /v1/status` at `Started` (5, k6 `lib/execution.go`) or later. A k6 not up yet, or
 * initialising, or paused before the run, has pushed nothing. Never rejects.
 */
function lateCheck(): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port: runnerPort, path: '/v1/status', timeout: 2_000 },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => {
          try {
            const status = (JSON.parse(body) as { data?: { attributes?: { status?: number } } }).data
              ?.attributes?.status;
            if ((status ?? 0) >= 5) end.late = true;
          } catch {
            // Not k6's answer: nothing known.
          }
          resolve();
        });
        res.on('error', () => resolve());
      },
    );
    req.on('timeout', () => req.destroy());
    // Not up yet: nothing pushed.
    req.on('error', () => resolve());
  });
}

/** Whether k6's REST API port takes a connection now. */
function runnerListens(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(runnerPort, '127.0.0.1');
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

let runnerSeen = false;
let checking = false;
/** Prints and exits once k6 is gone (see the file's comment). */
async function check(): Promise<void> {
  if (checking || ended) return;
  checking = true;
  try {
    const gone = async () => {
      const listens = await runnerListens();
      runnerSeen ||= listens;
      return runnerSeen && !listens && connections === 0;
    };
    // Twice, {@link QUIET_MS} apart: a push on a new connection in between is still taken.
    if (await gone()) {
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      if (await gone()) finish();
    }
  } finally {
    checking = false;
  }
}
const timer = setInterval(() => void check(), CHECK_MS);

let ended = false;
function finish(): void {
  if (ended) return;
  ended = true;
  clearInterval(timer);
  server.close();
  let text: string;
  try {
    text = `${encodeIntervalLines(kept, end).join('\n')}\n`;
  } catch (error) {
    text = `k6d-iv-end ${JSON.stringify({ ...end, error: `print: ${(error as Error).message}` })}\n`;
  }
  process.stdout.write(text, () => process.exit(0));
}

process.on('SIGTERM', () => {
  // k6 got it too: its last push comes as it stops; print once it is gone, or at the latest then.
  setTimeout(finish, SIGTERM_WAIT_MS).unref();
  void check();
});
process.on('SIGINT', finish);
// Nothing thrown ends it: the runner's pushes would fail.
process.on('uncaughtException', (error) => {
  end.error ??= `uncaught: ${error.message}`;
});
