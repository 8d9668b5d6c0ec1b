// Setup data: work done once before the load (log in, read the catalogue) and handed to every VU,
// then cleaned up in teardown.
//
// In a distributed run, setup() and teardown() run once for the whole test, as in one `k6 run`:
// setup() on one runner before the synchronised start, its data handed to every VU of every runner,
// teardown() once after every runner has finished. With 4 runners: 1 login, 1 logout.
//   npx k6-distributed run examples/setup-data.js --runners 4 -- -e BASE_URL=https://staging.example.com

import { check, fail, sleep } from 'k6';
import http from 'k6/http';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const json = { 'Content-Type': 'application/json' };

export const options = {
  vus: Number(__ENV.VUS || 10),
  duration: __ENV.DURATION || '1m',
  setupTimeout: '30s',
  thresholds: {
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    // Setup's requests carry the tag group=::setup: keep them out of the latency threshold.
    'http_req_duration{scenario:default}': ['p(95)<500'],
  },
};

export function setup() {
  const login = http.post(
    `${BASE_URL}/api/login`,
    JSON.stringify({ username: 'load-test', password: __ENV.PASSWORD || 'secret' }),
    { headers: json },
  );
  if (login.status !== 200) fail(`setup: login failed with status ${login.status}`);
  const token = login.json('token');
  const products = http.get(`${BASE_URL}/api/products`, { headers: { Authorization: `Bearer ${token}` } });
  if (products.status !== 200) fail(`setup: cannot read the catalogue (status ${products.status})`);
  // What setup returns is copied to every VU of every runner (as JSON: data only, no functions).
  return { token, productIds: products.json().map((p) => p.id) };
}

export default function (data) {
  const headers = { ...json, Authorization: `Bearer ${data.token}` };
  const productId = data.productIds[(__VU + __ITER) % data.productIds.length];
  const res = http.get(`${BASE_URL}/api/products/${productId}`, {
    headers,
    tags: { name: 'GET /api/products/:id' },
  });
  check(res, { 'product shown': (r) => r.status === 200 });
  sleep(Number(__ENV.THINK || 0.5));
}

export function teardown(data) {
  const res = http.post(`${BASE_URL}/api/logout`, null, {
    headers: { Authorization: `Bearer ${data.token}` },
  });
  check(res, { 'logged out': (r) => r.status === 204 });
}
