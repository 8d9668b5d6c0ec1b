// A test written for large runs (thousands of VUs over many runners):
// - discardResponseBodies: k6 keeps no response body unless a request asks for it, which saves
//   memory per VU and CPU; the one request whose body is checked asks with responseType: 'text';
// - resilient checks: they look at the status, never assume a body, and never throw, so an
//   overloaded target shows up as failed checks and http_req_failed, not as script exceptions;
// - timeouts shorter than k6's 60 s default, so a stalled target fails requests instead of
//   parking every VU for a minute;
// - one `name` tag for URLs that carry ids, so metrics keep one series per endpoint;
// - abortOnFail on the error rate: a runner whose slice crosses it stops the whole run.
// VUs and duration are the options `--vus` and `--duration` set (the manual large-run workflow
// passes them), or VUS and DURATION:
//   npx k6-distributed run examples/large-run.js --runners 8 -- --vus 8000 --duration 10m -e BASE_URL=…

import { check, sleep } from 'k6';
import http from 'k6/http';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const TIMEOUT = __ENV.TIMEOUT || '10s';

export const options = {
  vus: Number(__ENV.VUS || 100),
  duration: __ENV.DURATION || '5m',
  discardResponseBodies: true,
  thresholds: {
    http_req_failed: [{ threshold: 'rate<0.05', abortOnFail: true, delayAbortEval: '30s' }],
    'http_req_duration{expected_response:true}': ['p(95)<500', 'p(99)<1500'],
    checks: ['rate>0.95'],
  },
};

const ids = [1, 2, 3, 4, 5, 6, 7, 8];

export default function () {
  // Status only: no body is kept (discardResponseBodies).
  const list = http.get(`${BASE_URL}/api/products`, { timeout: TIMEOUT });
  check(list, { 'products: status 200': (r) => r.status === 200 });

  const id = ids[Math.floor(Math.random() * ids.length)];
  const product = http.get(`${BASE_URL}/api/products/${id}`, {
    timeout: TIMEOUT,
    tags: { name: 'GET /api/products/:id' },
  });
  check(product, { 'product: status 200': (r) => r.status === 200 });

  // The one body this test reads. r.json() throws on an empty or non-JSON body (a timeout, an
  // error page from an overloaded proxy): the check catches it and fails instead of aborting
  // the iteration.
  const items = http.get(`${BASE_URL}/api/items`, { timeout: TIMEOUT, responseType: 'text' });
  check(items, {
    'items: status 200': (r) => r.status === 200,
    'items: has items': (r) => {
      try {
        return r.json('items.#') > 0;
      } catch {
        return false;
      }
    },
  });

  sleep(1);
}
