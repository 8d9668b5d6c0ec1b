// Two kinds of traffic in one test, as two scenarios with their own executor, tags and thresholds:
// - `browse`: anonymous readers at a fixed arrival rate (requests per second, whatever the latency);
// - `checkout`: logged-in buyers, a fixed number of concurrent VUs.
// Every metric sample carries the tag `scenario`, and each scenario adds `flow`; thresholds on
// submetrics ({scenario:…}, {flow:…}, {name:…}) judge each kind of traffic on its own, and the
// distributed run judges them on the aggregate of all runners.
//   npx k6-distributed run examples/scenarios.js --runners 4 -- -e BASE_URL=https://staging.example.com

import { check, sleep } from 'k6';
import http from 'k6/http';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const DURATION = __ENV.DURATION || '2m';

export const options = {
  scenarios: {
    browse: {
      executor: 'constant-arrival-rate',
      exec: 'browse',
      rate: Number(__ENV.BROWSE_RATE || 50),
      timeUnit: '1s',
      duration: DURATION,
      preAllocatedVUs: 10,
      maxVUs: 50,
      tags: { flow: 'browse' },
    },
    checkout: {
      executor: 'constant-vus',
      exec: 'checkout',
      vus: Number(__ENV.CHECKOUT_VUS || 5),
      duration: DURATION,
      startTime: __ENV.CHECKOUT_START || '0s',
      tags: { flow: 'checkout' },
    },
  },
  thresholds: {
    // Per scenario: readers must be fast, buyers may wait a little longer.
    'http_req_duration{scenario:browse}': ['p(95)<300'],
    'http_req_duration{scenario:checkout}': ['p(95)<800'],
    // Per request name, inside one flow.
    'http_req_duration{flow:checkout,name:POST /api/checkout}': ['p(99)<1500'],
    'http_req_failed{scenario:checkout}': ['rate<0.01'],
    'checks{flow:checkout}': ['rate>0.99'],
    // Counts are judged on the whole run, never on one runner's slice.
    'iterations{scenario:checkout}': ['count>0'],
  },
};

const json = { 'Content-Type': 'application/json' };

export function browse() {
  const res = http.get(`${BASE_URL}/api/products`, { tags: { name: 'GET /api/products' } });
  check(res, { 'catalogue listed': (r) => r.status === 200 });
}

export function checkout() {
  const login = http.post(
    `${BASE_URL}/api/login`,
    JSON.stringify({ username: `buyer-${__VU}`, password: 'secret' }),
    { headers: json, tags: { name: 'POST /api/login' } },
  );
  if (!check(login, { 'logged in': (r) => r.status === 200 })) return;
  const headers = { ...json, Authorization: `Bearer ${login.json('token')}` };
  const cart = http.post(`${BASE_URL}/api/cart`, JSON.stringify({ productId: 1, quantity: 1 }), {
    headers,
    tags: { name: 'POST /api/cart' },
  });
  check(cart, { 'added to cart': (r) => r.status === 201 });
  const order = http.post(`${BASE_URL}/api/checkout`, null, {
    headers,
    tags: { name: 'POST /api/checkout' },
  });
  check(order, { 'order placed': (r) => r.status === 200 });
  sleep(Number(__ENV.THINK || 1));
}
