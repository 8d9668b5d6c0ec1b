/**
 * The k6 REST API of one runner (https://grafana.com/docs/k6/latest/reference/k6-rest-api/),
 * as far as orchestration needs it. Facts from k6 v2.2.0 `api/v1`:
 * - `GET /v1/status` -> `data.attributes.{status, paused, running, stopped, vus, vus-max, tainted}`;
 *   the API answers before VUs are initialised, so HTTP 200 is not readiness: status 4 is;
 * - `PATCH /v1/status` with `paused: false` starts a paused run, with `stopped: true` stops it
 *   (the runner then exits with code 103);
 * - `GET /v1/metrics` -> `data[] = {id, attributes: {type, contains, sample}}`;
 * - `POST /v1/setup` runs `setup()` on that runner and answers
 *   `{data: {type: "setupData", attributes: {data: <setup's return value>}}}` (`attributes` is empty
 *   when setup returned nothing); `PUT /v1/setup` sets the runner's setup data from the raw body;
 *   `POST /v1/teardown` runs `teardown(data)` and answers an empty 200. Both run inside the request
 *   (its context) and answer HTTP 500 with `errors[0].detail` = k6's message when the function throws
 *   or passes `setupTimeout`/`teardownTimeout` (`api/v1/setup_teardown_routes.go`).
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
  /** `true` once a threshold of this metric failed on this runner (k6 `Metric.Tainted`). */
  tainted?: boolean;
}

/**
 * How long one REST call may take before it is given up, in ms. A runner whose process is stopped
 * (SIGSTOP, a frozen node) accepts connections but never answers: without these, each call would
 * hold the orchestrator that long. Polls are short so that a slow runner never delays the progress
 * line; a stop that does not answer in time makes the orchestrator kill the runner.
 */
export const REST_TIMEOUT_MS = {
  /** `GET /v1/metrics`, `GET /v1/groups` while the test runs. */
  poll: 2_000,
  /** `PATCH /v1/status` `stopped: true`. */
  stop: 3_000,
  /** Everything else (status polls before the start, the start PATCH). */
  other: 10_000,
} as const;

/**
 * How a backend sends one HTTP request to a runner's REST API; resolves with the parsed JSON body
 * (`undefined` for an empty body, as `POST /v1/teardown` answers). It rejects when no answer came
 * within `timeoutMs` (default {@link REST_TIMEOUT_MS}.other); setup and teardown run inside their
 * request, so theirs are longer.
 * @throws RunnerHttpError on a non-2xx answer; Error when the runner cannot be reached.
 */
export type RunnerRequest = (
  method: 'GET' | 'PATCH' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
  timeoutMs?: number,
) => Promise<unknown>;

/** A non-2xx answer of a runner's REST API, with k6's own error text when it gave one. */
export class RunnerHttpError extends Error {
  override name = 'RunnerHttpError';
  /** The HTTP status code. */
  readonly status: number;
  /** `errors[0].detail` of k6's JSON:API error document (its message, with a stack for a script exception), else the body. */
  readonly detail: string;
  constructor(method: string, path: string, status: number, body: string) {
    const detail = errorDetail(body);
    super(`${method} ${path}: HTTP ${status} ${detail.slice(0, 200)}`);
    this.status = status;
    this.detail = detail;
  }
}

/** `errors[0].detail` (or `.title`) of a JSON:API error document; the body itself when it is not one. */
function errorDetail(body: string): string {
  try {
    const first = (JSON.parse(body) as { errors?: Array<{ detail?: string; title?: string }> }).errors?.[0];
    return first?.detail ?? first?.title ?? body;
  } catch {
    return body;
  }
}

/** Parses a REST answer's body: `undefined` when empty. @throws Error when it is not JSON. */
export function parseBody(method: string, path: string, text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${method} ${path}: not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * Whether a REST call failed because the runner did not answer in time (fetch's `TimeoutError`,
 * a socket timeout `ETIMEDOUT`): a frozen runner, unlike one that refused or closed the connection.
 */
export function isRestTimeout(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown } | null;
  return e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT';
}

/** Passed and failed check totals of one runner since the start. */
export interface CheckTotals {
  passes: number;
  fails: number;
}

/** The REST calls the orchestrator makes to one runner. */
export interface RunnerApi {
  /** Its status (`GET /v1/status`); rejects after `timeoutMs` (default {@link REST_TIMEOUT_MS}.other). */
  status(timeoutMs?: number): Promise<K6Status>;
  /** Un-pauses the runner: its test starts. */
  start(): Promise<K6Status>;
  /** Stops the runner's test; k6 then writes its summary and exits with 103. */
  stop(): Promise<void>;
  /** Its live metrics (`GET /v1/metrics`); rejects after {@link REST_TIMEOUT_MS}.poll. */
  metrics(): Promise<K6LiveMetric[]>;
  /**
   * Its check totals since the start (`GET /v1/groups`); rejects after {@link REST_TIMEOUT_MS}.poll.
   * Optional: a runner without it has no live check counts.
   */
  checks?(): Promise<CheckTotals>;
  /**
   * Runs the script's `setup()` on this runner (`POST /v1/setup`), while it is paused.
   * @returns `{data}` with setup's return value, or `undefined` when it returned nothing.
   * @throws RunnerHttpError (HTTP 500, `detail` k6's message) when setup() threw or timed out.
   */
  setup(timeoutMs: number): Promise<{ data: unknown } | undefined>;
  /** Sets this runner's setup data (`PUT /v1/setup`), which its VUs receive. */
  setSetupData(data: unknown): Promise<void>;
  /**
   * Runs the script's `teardown(data)` with this runner's setup data (`POST /v1/teardown`).
   * @throws RunnerHttpError (HTTP 500, `detail` k6's message) when teardown() threw or timed out.
   */
  teardown(timeoutMs: number): Promise<void>;
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
    ...(m.attributes?.tainted === true ? { tainted: true } : {}),
  }));
}

function statusBody(attributes: Attrs) {
  return { data: { type: 'status', id: 'default', attributes } };
}

/** A {@link RunnerApi} over any transport (direct HTTP, or the Kubernetes API server's pod proxy). */
export function runnerApi(request: RunnerRequest): RunnerApi {
  return {
    status: async (timeoutMs) => parseStatus(await request('GET', '/v1/status', undefined, timeoutMs)),
    start: async () => parseStatus(await request('PATCH', '/v1/status', statusBody({ paused: false }))),
    stop: async () => {
      await request('PATCH', '/v1/status', statusBody({ stopped: true }), REST_TIMEOUT_MS.stop);
    },
    metrics: async () => parseMetrics(await request('GET', '/v1/metrics', undefined, REST_TIMEOUT_MS.poll)),
    checks: async () =>
      checkTotalsFromGroups(await request('GET', '/v1/groups', undefined, REST_TIMEOUT_MS.poll)),
    setup: async (timeoutMs) => {
      const doc = await request('POST', '/v1/setup', undefined, timeoutMs);
      const attributes = (doc as { data?: { attributes?: Attrs } } | undefined)?.data?.attributes;
      return attributes && 'data' in attributes ? { data: attributes.data } : undefined;
    },
    setSetupData: async (data) => {
      await request('PUT', '/v1/setup', data);
    },
    teardown: async (timeoutMs) => {
      await request('POST', '/v1/teardown', undefined, timeoutMs);
    },
  };
}

/**
 * A {@link RunnerRequest} straight to `http://host:port` with fetch (keep-alive connections, so the
 * start PATCHes go out on warm sockets).
 * @throws RunnerHttpError on a non-2xx answer.
 */
export function httpRequest(
  baseUrl: string,
  defaultTimeoutMs: number = REST_TIMEOUT_MS.other,
): RunnerRequest {
  return async (method, path, body, timeoutMs = defaultTimeoutMs) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw new RunnerHttpError(method, path, response.status, text);
    return parseBody(method, path, text);
  };
}

/**
 * Sums the check counts of a `GET /v1/groups` answer (k6 `api/v1/group_routes.go`: every group,
 * flattened, each with `attributes.checks[] = {passes, fails}`).
 * @throws Error when the document has no `data` array.
 */
export function checkTotalsFromGroups(doc: unknown): CheckTotals {
  const data = (doc as { data?: unknown })?.data;
  if (!Array.isArray(data))
    throw new Error(`unexpected k6 groups response: ${JSON.stringify(doc).slice(0, 200)}`);
  const totals: CheckTotals = { passes: 0, fails: 0 };
  for (const group of data as Array<{ attributes?: { checks?: Array<Partial<CheckTotals>> } }>) {
    for (const check of group.attributes?.checks ?? []) {
      totals.passes += Number(check.passes ?? 0);
      totals.fails += Number(check.fails ?? 0);
    }
  }
  return totals;
}
