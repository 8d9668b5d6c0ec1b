import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import getPort from 'get-port';
import { type Logger, silentLogger } from '../log.ts';

/**
 * HTTP targets on loopback for the demo, the tests and the benchmarks. Load only ever goes to
 * 127.0.0.1.
 */

/** A running target. */
export interface Target {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `nginx` or `node`. */
  kind: 'nginx' | 'node';
  stop(): Promise<void>;
}

/** One request as the Node target saw it. */
export interface Arrival {
  /** Epoch ms, with sub-ms precision. */
  at: number;
  path: string;
  /** The `x-runner` request header, if the script sent one. */
  runner?: string;
}

/** A target that records every request's arrival. */
export interface RecordingTarget extends Target {
  arrivals: Arrival[];
}

const ITEMS = JSON.stringify({ items: [1, 2, 3] });

/**
 * A small Node HTTP server: `/api/items` (JSON), `/slow?ms=N` (answers after N ms), `/status/N`
 * (answers with status N), anything else `ok`. It records every arrival.
 * @param host the address to listen on: 127.0.0.1, or an address of a test network this process
 *   made itself (the test cluster's pod gateway).
 */
export async function startNodeTarget(host = '127.0.0.1'): Promise<RecordingTarget> {
  const arrivals: Arrival[] = [];
  const epoch = Date.now() - performance.now();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://target');
    const runner = req.headers['x-runner'];
    arrivals.push({
      at: epoch + performance.now(),
      path: url.pathname,
      ...(typeof runner === 'string' ? { runner } : {}),
    });
    if (url.pathname === '/api/items') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(ITEMS);
    } else if (url.pathname === '/slow') {
      setTimeout(() => res.end('ok'), Number(url.searchParams.get('ms') ?? 0));
    } else if (url.pathname.startsWith('/status/')) {
      res.writeHead(Number(url.pathname.slice(8)) || 500).end();
    } else {
      res.end('ok');
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://${host}:${port}`,
    kind: 'node',
    arrivals,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function hasNginx(): boolean {
  return spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0;
}

/**
 * Makes nginx available when it can be: already on PATH, or installed from Debian's packages
 * (`nginx-light`) when this process is root and has apt-get. Returns whether nginx is there.
 */
export function ensureNginx(log: Logger = silentLogger): boolean {
  if (hasNginx()) return true;
  const root = process.getuid?.() === 0;
  if (!root || spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return false;
  log.info('installing nginx-light from Debian packages for the demo target');
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '-q', 'nginx-light'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'ignore' });
    install();
  }
  return hasNginx();
}

/**
 * nginx on 127.0.0.1 with its own prefix folder (nothing of the system's nginx is used):
 * `/api/items` answers JSON, anything else `ok`. Needs `nginx` on PATH.
 */
export async function startNginx(): Promise<Target> {
  const prefix = await mkdtemp(path.join(os.tmpdir(), 'k6-distributed-nginx-'));
  const port = await getPort({ host: '127.0.0.1' });
  const conf = `
worker_processes ${Math.max(1, Math.min(2, os.availableParallelism()))};
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  server {
    listen 127.0.0.1:${port};
    location /api/items { default_type application/json; return 200 '${ITEMS}'; }
    location / { default_type text/plain; return 200 'ok'; }
  }
}
`;
  await writeFile(path.join(prefix, 'nginx.conf'), conf);
  const child = spawn('nginx', ['-p', prefix, '-c', path.join(prefix, 'nginx.conf')], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    kind: 'nginx',
    stop: async () => {
      child.kill('SIGTERM');
      // SIGTERM is nginx's fast shutdown: the master waits for its workers, so none is orphaned.
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      await rm(prefix, { recursive: true, force: true });
    },
  };
}

/** nginx when it is available (installing it where allowed), else the Node target. */
export async function startDemoTarget(log: Logger): Promise<Target> {
  if (process.env.K6D_DEMO_TARGET !== 'node' && ensureNginx(log)) return startNginx();
  return startNodeTarget();
}
