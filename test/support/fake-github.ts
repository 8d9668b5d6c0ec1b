import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  artifact,
  artifacts,
  BASE_SHA,
  comment,
  compare,
  HEAD_SHA,
  MERGE_BASE,
  OWNER,
  REPO,
  REPO_PATH,
  workflowRun,
  workflowRuns,
} from './github.ts';

/**
 * A tiny GitHub on 127.0.0.1 for the bundled action, which runs in another process where nock
 * cannot intercept anything. Routes answer with the REST shapes of the fixtures in github.ts; the
 * issue comments are kept in memory, so a second run sees the first run's comment. Every request
 * is recorded; an unknown route answers 404 and is recorded as unexpected.
 */
export interface FakeGitHub {
  url: string;
  requests: Array<{ method: string; path: string; body?: unknown; authorization?: string }>;
  unexpected: string[];
  comments: Array<ReturnType<typeof comment>>;
  close(): Promise<void>;
}

/** A route: method and path pattern (matched against the path without the query) to a handler. */
export type Route = [
  method: string,
  pattern: RegExp,
  handler: (
    match: RegExpMatchArray,
    url: URL,
    body: unknown,
    base: string,
  ) => { status: number; body?: unknown; headers?: Record<string, string> },
];

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** Starts the server with `routes` plus the issue comment routes of PR 2. */
export async function startFakeGitHub(routes: Route[]): Promise<FakeGitHub> {
  const fake: Omit<FakeGitHub, 'url' | 'close'> = { requests: [], unexpected: [], comments: [] };
  let nextId = 100;
  const repo = `/repos/${OWNER}/${REPO}`;
  const all: Route[] = [
    ...routes,
    ['GET', new RegExp(`^${repo}/issues/2/comments$`), () => ({ status: 200, body: fake.comments })],
    [
      'POST',
      new RegExp(`^${repo}/issues/2/comments$`),
      (_m, _u, body) => {
        const c = comment(nextId++, (body as { body: string }).body);
        fake.comments.push(c);
        return { status: 201, body: c };
      },
    ],
    [
      'PATCH',
      new RegExp(`^${repo}/issues/comments/(\\d+)$`),
      (m, _u, body) => {
        const c = fake.comments.find((x) => x.id === Number(m[1]));
        if (!c) return { status: 404, body: { message: 'Not Found' } };
        c.body = (body as { body: string }).body;
        return { status: 200, body: c };
      },
    ],
  ];
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = await readBody(req);
    fake.requests.push({
      method: req.method ?? '',
      path: `${url.pathname}${url.search}`,
      ...(body === undefined ? {} : { body }),
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const [method, pattern, handler] of all) {
      const m = url.pathname.match(pattern);
      if (req.method !== method || !m) continue;
      const out = handler(m, url, body, base);
      const payload = Buffer.isBuffer(out.body) ? out.body : JSON.stringify(out.body ?? '');
      res.writeHead(out.status, { 'content-type': 'application/json; charset=utf-8', ...out.headers });
      res.end(payload);
      return;
    }
    fake.unexpected.push(`${req.method} ${url.pathname}${url.search}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/**
 * The base branch as the report action reads it: master's workflow perf.yml has one successful
 * run, 501 at the merge-base, whose artifact named `name` has the id `artifactId(name)` (none when
 * undefined) and downloads as `zipOf(id)` through a signed-URL redirect, as GitHub serves it.
 */
export function baseBranchRoutes(
  artifactId: (name: string) => number | undefined,
  zipOf: (id: number) => Buffer | undefined,
): Route[] {
  return [
    [
      'GET',
      new RegExp(`^${REPO_PATH}/compare/${BASE_SHA}\\.\\.\\.${HEAD_SHA}$`),
      () => ({ status: 200, body: compare(MERGE_BASE) }),
    ],
    [
      'GET',
      new RegExp(`^${REPO_PATH}/actions/workflows/perf\\.yml/runs$`),
      (_m, url) => ({
        status: 200,
        body: workflowRuns(url.searchParams.get('branch') === 'master' ? [workflowRun(501, MERGE_BASE)] : []),
      }),
    ],
    [
      'GET',
      new RegExp(`^${REPO_PATH}/actions/runs/501/artifacts$`),
      (_m, url) => {
        const name = url.searchParams.get('name') ?? '';
        const id = artifactId(name);
        return { status: 200, body: artifacts(id === undefined ? [] : [artifact(id, name, 501)]) };
      },
    ],
    [
      'GET',
      new RegExp(`^${REPO_PATH}/actions/artifacts/(\\d+)/zip$`),
      (m, _u, _b, base) => ({ status: 302, headers: { location: `${base}/blob/${m[1]}.zip?sig=x` } }),
    ],
    [
      'GET',
      /^\/blob\/(\d+)\.zip$/,
      (m) => ({ status: 200, body: zipOf(Number(m[1])), headers: { 'content-type': 'application/zip' } }),
    ],
  ];
}
