// The calibration target, run as its own process (bench/calibration/target.ts starts it) so that the
// harness's event loop never serves a request. Two shapes, each scaled by the `f` query parameter:
// - `/mixed?f=F`: CPU work (MIXED_CPU_MS × F of SHA-256 hashing) then a wait (exponential, mean
//   MIXED_WAIT_MS × F): a handler that computes a little and waits on something (a database, a cache);
// - `/cpu?f=F`: CPU work only (CPU_MS × F of SHA-256 hashing, 3 ms by default): requests queue on the one event loop
//   when they overlap, as on a CPU-bound service.
// The hashing is a fixed number of iterations per request, calibrated once at start to the given
// milliseconds on this machine: a busy machine then makes it slower, as it would a real service.
// Prints `{"port": N, "iterationsPerMs": X}` on its first stdout line. Listens on 127.0.0.1 only.
import { createHash } from 'node:crypto';
import http from 'node:http';

const MIXED_CPU_MS = Number(process.env.MIXED_CPU_MS ?? 1);
const MIXED_WAIT_MS = Number(process.env.MIXED_WAIT_MS ?? 3);
const CPU_MS = Number(process.env.CPU_MS ?? 3);
const block = Buffer.alloc(256, 7);

function burn(iterations: number): void {
  let h = block;
  for (let i = 0; i < iterations; i++) h = createHash('sha256').update(h).digest();
}

/** Hash iterations per ms: the best of a few 50 ms trials (the least disturbed by other load). */
function calibrate(): number {
  let best = 0;
  for (let t = 0; t < 5; t++) {
    const n = 20_000;
    const t0 = performance.now();
    burn(n);
    best = Math.max(best, n / (performance.now() - t0));
  }
  return best;
}

const perMs = calibrate();
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://target');
  const f = Number(url.searchParams.get('f') ?? 1);
  if (url.pathname === '/mixed') {
    burn(Math.round(MIXED_CPU_MS * f * perMs));
    const wait = -Math.log(1 - Math.random()) * MIXED_WAIT_MS * f;
    setTimeout(() => res.end('ok'), wait);
  } else if (url.pathname === '/cpu') {
    burn(Math.round(CPU_MS * f * perMs));
    res.end('ok');
  } else {
    res.writeHead(404).end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ port, iterationsPerMs: Math.round(perMs) })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
