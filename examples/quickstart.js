// A single-endpoint load test: a constant arrival rate against BASE_URL, with checks and thresholds.
// `npm run demo` runs it with 4 runners against a local target; on your own service:
//   npx k6-distributed run examples/quickstart.js --runners 4 -- -e BASE_URL=https://staging.example.com

import { check } from 'k6';
import http from 'k6/http';

const target = __ENV.BASE_URL || 'http://127.0.0.1:8080';

export const options = {
  scenarios: {
    api: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || 400),
      timeUnit: '1s',
      duration: __ENV.DURATION || '15s',
      preAllocatedVUs: 20,
      maxVUs: 40,
    },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    http_req_duration: ['p(95)<200', 'p(99)<500'],
    checks: ['rate>0.99'],
    http_reqs: ['count>100'],
  },
};

export default function () {
  const res = http.get(`${target}/api/items`, { tags: { name: 'items' } });
  check(res, {
    'status is 200': (r) => r.status === 200,
    'body has items': (r) => r.body?.includes('items'),
  });
}
