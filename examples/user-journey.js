// A multi-step user journey with think time: log in, browse the catalogue, add to the cart, check
// out. Each VU is one user going through the shop at a human pace, so VUs are concurrent users
// (not requests per second). Groups name the steps; thresholds judge the whole journey and each step.
//   npx k6-distributed run examples/user-journey.js --runners 4 -- -e BASE_URL=https://staging.example.com
// Shorter runs: -e VUS=10 -e RAMP=10s -e HOLD=1m; faster users: -e THINK_MIN=0.5 -e THINK_MAX=1.

import { check, group, sleep } from 'k6';
import http from 'k6/http';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const VUS = Number(__ENV.VUS || 20);
const RAMP = __ENV.RAMP || '30s';
const HOLD = __ENV.HOLD || '3m';
const THINK_MIN = Number(__ENV.THINK_MIN || 1);
const THINK_MAX = Number(__ENV.THINK_MAX || 3);

export const options = {
  scenarios: {
    shoppers: {
      executor: 'ramping-vus',
      startVUs: 0,
      stages: [
        { duration: RAMP, target: VUS }, // users arrive
        { duration: HOLD, target: VUS }, // steady state
        { duration: RAMP, target: 0 }, // users leave (each finishes its journey: gracefulRampDown)
      ],
      gracefulRampDown: '30s',
    },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    // Per step: requests inside group('checkout') carry the tag group=::checkout.
    'http_req_duration{group:::browse}': ['p(95)<500'],
    'http_req_duration{group:::checkout}': ['p(95)<1000'],
    // The time a user spends in a step, think time included.
    'group_duration{group:::checkout}': ['p(95)<8000'],
  },
};

/** A pause like a person reading the page: THINK_MIN to THINK_MAX seconds. */
function think() {
  sleep(THINK_MIN + Math.random() * (THINK_MAX - THINK_MIN));
}

const json = { headers: { 'Content-Type': 'application/json' } };

export default function () {
  let token;
  group('login', () => {
    const res = http.post(
      `${BASE_URL}/api/login`,
      JSON.stringify({ username: `user-${__VU}`, password: 'secret' }),
      json,
    );
    check(res, { 'logged in': (r) => r.status === 200 && Boolean(r.json('token')) });
    token = res.status === 200 ? res.json('token') : undefined;
  });
  if (!token) return; // no session: this iteration has nothing left to do
  const auth = { headers: { ...json.headers, Authorization: `Bearer ${token}` } };
  think();

  let productId;
  group('browse', () => {
    const list = http.get(`${BASE_URL}/api/products`, auth);
    check(list, { 'catalogue listed': (r) => r.status === 200 });
    const products = list.status === 200 ? list.json() : [];
    think();
    if (products.length === 0) return;
    productId = products[Math.floor(Math.random() * products.length)].id;
    // One name for every product page, so that the metrics do not get one series per id.
    const page = http.get(`${BASE_URL}/api/products/${productId}`, {
      ...auth,
      tags: { name: 'GET /api/products/:id' },
    });
    check(page, { 'product shown': (r) => r.status === 200 });
  });
  if (productId === undefined) return;
  think();

  group('checkout', () => {
    const cart = http.post(`${BASE_URL}/api/cart`, JSON.stringify({ productId, quantity: 1 }), auth);
    check(cart, { 'added to cart': (r) => r.status === 201 });
    think();
    const order = http.post(`${BASE_URL}/api/checkout`, null, auth);
    check(order, { 'order placed': (r) => r.status === 200 && Boolean(r.json('orderId')) });
  });
  think();
}
