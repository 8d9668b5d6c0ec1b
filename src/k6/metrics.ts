import type { MetricContains, MetricType } from '../result/schema.ts';

/**
 * k6's built-in metric names this product reads, defined once
 * (https://grafana.com/docs/k6/latest/using-k6/metrics/reference/).
 */
export const K6_METRIC = {
  /** Counter of HTTP requests. */
  httpReqs: 'http_reqs',
  /** Trend of HTTP request durations, in ms. */
  httpReqDuration: 'http_req_duration',
  /**
   * The submetric of {@link K6_METRIC.httpReqDuration} over responses k6 expected (2xx/3xx by
   * default): the key k6 prints in its end-of-test summary.
   */
  httpReqDurationExpected: 'http_req_duration{expected_response:true}',
  /** Rate of failed HTTP requests (fraction 0..1). */
  httpReqFailed: 'http_req_failed',
  /** Counter of completed iterations. */
  iterations: 'iterations',
  /** Rate of successful checks (fraction 0..1). */
  checks: 'checks',
  /** Gauge of active VUs. */
  vus: 'vus',
  /** Gauge of allocated VUs. */
  vusMax: 'vus_max',
  /**
   * Counter of iterations an arrival-rate executor could not start (no free VU, `maxVUs` reached);
   * k6 emits it only when one was dropped.
   */
  droppedIterations: 'dropped_iterations',
} as const;

/** k6's built-in metrics and what they contain (https://grafana.com/docs/k6/latest/using-k6/metrics/reference/). */
const BUILTIN_CONTAINS: Record<string, MetricContains> = {
  data_received: 'data',
  data_sent: 'data',
  ws_msgs_received: 'default',
};

/**
 * What a metric's values measure. Prefers what the runners' REST API said (`/v1/metrics` has
 * `contains` for every metric, custom ones too); otherwise k6's built-in names: `data_*` are bytes,
 * and every built-in trend (`http_req_*`, `iteration_duration`, `group_duration`, `ws_*`,
 * `grpc_req_duration`, `browser_*`) is time.
 */
export function metricContains(
  name: string,
  type: MetricType,
  known?: Record<string, MetricContains>,
): MetricContains {
  const base = name.split('{')[0]!;
  const fromApi = known?.[base];
  if (fromApi) return fromApi;
  if (BUILTIN_CONTAINS[base]) return BUILTIN_CONTAINS[base]!;
  if (
    type === 'trend' &&
    /^(http_req_|iteration_duration|group_duration|ws_|grpc_req_duration|browser_)/.test(base)
  ) {
    return 'time';
  }
  return 'default';
}
