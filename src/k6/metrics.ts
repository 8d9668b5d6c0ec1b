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
} as const;
