/**
 * The k6 REST API of one runner (https://grafana.com/docs/k6/latest/reference/k6-rest-api/),
 * as far as orchestration needs it. Facts from k6 v2.2.0 `api/v1`:
 * - `GET /v1/status` -> `data.attributes.{status, paused, running, stopped, vus, vus-max, tainted}`;
 *   the API answers before VUs are initialised, so HTTP 200 is not readiness: status 4 is;
 * - `PATCH /v1/status` with `paused: false` starts a paused run, with `stopped: true` stops it
 *   (the runner then exits with code 103);
 * - `GET /v1/metrics` -> `data[] = {id, attributes: {type, contains, sample}}`.
 */

/** k6's execution status numbers (`lib/execution.go`). */
export const K6_STATUS = {
  Created: 0,
  InitVUs: 1,
  InitExecutors: 2,
  InitDone: 3,
  PausedBeforeRun: 4,
  Started: 5,
  Setup: 6,
  Running: 7,
  Teardown: 8,
  Ended: 9,
  Interrupted: 10,
  MarkedAsFailed: 11,
} as const;

const STATUS_NAMES = Object.fromEntries(Object.entries(K6_STATUS).map(([k, v]) => [v, k])) as Record<
  number,
  string
>;

/** The name of a status number, e.g. 4 -> `PausedBeforeRun`. */
export function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `status ${status}`;
}

/** A runner's status. */
export interface K6Status {
  status: number;
  paused: boolean;
  running: boolean;
  stopped: boolean;
  vus: number;
  vusMax: number;
  tainted: boolean;
}

/** One metric's live sample from `/v1/metrics` (trends only carry min/max/avg/med/p(90)/p(95)). */
export interface K6LiveMetric {
  name: string;
  type: 'counter' | 'gauge' | 'rate' | 'trend';
  contains: 'time' | 'data' | 'default';
  sample: Record<string, number>;
}

/** How a backend sends one HTTP request to a runner's REST API; resolves with the parsed JSON body. */
export type RunnerRequest = (method: 'GET' | 'PATCH', path: string, body?: unknown) => Promise<unknown>;

/** The REST calls the orchestrator makes to one runner. */
export interface RunnerApi {
  status(): Promise<K6Status>;
  /** Un-pauses the runner: its test starts. */
  start(): Promise<K6Status>;
  /** Stops the runner's test; k6 then writes its summary and exits with 103. */
  stop(): Promise<void>;
  metrics(): Promise<K6LiveMetric[]>;
}

type Attrs = Record<string, unknown>;

/** Reads a `/v1/status` JSON:API document. @throws Error when it is not one. */
export function parseStatus(doc: unknown): K6Status {
  const attributes = (doc as { data?: { attributes?: Attrs } })?.data?.attributes;
  if (!attributes || typeof attributes.status !== 'number') {
    throw new Error(`unexpected k6 status response: ${JSON.stringify(doc).slice(0, 200)}`);
  }
  return {
    status: attributes.status,
    paused: attributes.paused === true,
    running: attributes.running === true,
    stopped: attributes.stopped === true,
    vus: Number(attributes.vus ?? 0),
    vusMax: Number(attributes['vus-max'] ?? 0),
    tainted: attributes.tainted === true,
  };
}

/** Reads a `/v1/metrics` JSON:API document. */
export function parseMetrics(doc: unknown): K6LiveMetric[] {
  const data = (doc as { data?: Array<{ id?: string; attributes?: Attrs }> })?.data ?? [];
  return data.map((m) => ({
    name: String(m.id),
    type: m.attributes?.type as K6LiveMetric['type'],
    contains: (m.attributes?.contains ?? 'default') as K6LiveMetric['contains'],
    sample: (m.attributes?.sample ?? {}) as Record<string, number>,
  }));
}

function statusBody(attributes: Attrs) {
  return { data: { type: 'status', id: 'default', attributes } };
}

/** A {@link RunnerApi} over any transport (direct HTTP, or the Kubernetes API server's pod proxy). */
export function runnerApi(request: RunnerRequest): RunnerApi {
  return {
    status: async () => parseStatus(await request('GET', '/v1/status')),
    start: async () => parseStatus(await request('PATCH', '/v1/status', statusBody({ paused: false }))),
    stop: async () => {
      await request('PATCH', '/v1/status', statusBody({ stopped: true }));
    },
    metrics: async () => parseMetrics(await request('GET', '/v1/metrics')),
  };
}

/**
 * A {@link RunnerRequest} straight to `http://host:port` with fetch (keep-alive connections, so the
 * start PATCHes go out on warm sockets).
 * @throws Error on a non-2xx answer, with the status and the start of the body.
 */
export function httpRequest(baseUrl: string, timeoutMs = 10_000): RunnerRequest {
  return async (method, path, body) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as unknown;
  };
}
