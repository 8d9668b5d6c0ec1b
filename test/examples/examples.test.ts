import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunInputs } from '../../src/actions/run/inputs.ts';
import { runnerPod } from '../../src/backends/kubernetes/manifests.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { planRun } from '../../src/run/plan.ts';
import { dig, parseYaml, ROOT, readYaml } from '../docs/support/actions.ts';
import { runCli } from '../support/cli.ts';
import { type Shop, startShop } from './support/shop.ts';

// Every k6 script in examples/ runs here with the local backend (2 runners, 3 s), through the
// CLI, against a small shop API on 127.0.0.1, and passes its own thresholds on the aggregate.

let shop: Shop;
beforeAll(async () => {
  // Vitest sets BASE_URL=/ in the environment (Vite's import.meta.env) and the runners inherit it:
  // the `-e BASE_URL=…` the tests pass must still win, as it does in a plain `k6 run`.
  shop = await startShop();
});
afterAll(async () => {
  await shop.stop();
});

interface Example {
  /** Extra k6 flags (`-e NAME=value`) that make the run short. */
  args: string[];
  /** What this example shows, checked on its result and on the shop's counts. */
  check(result: RunResult, before: Map<string, number>): void;
}

const count = (key: string, before: Map<string, number>) =>
  (shop.counts.get(key) ?? 0) - (before.get(key) ?? 0);
const env = (pairs: Record<string, string>) => Object.entries(pairs).flatMap(([k, v]) => ['-e', `${k}=${v}`]);

/** Every check of the result, with the groups' checks. */
function allChecks(result: RunResult): Array<{ name: string; passes: number; fails: number }> {
  type Group = { checks: Array<{ name: string; passes: number; fails: number }>; groups: Group[] };
  const walk = (g: Group): Array<{ name: string; passes: number; fails: number }> => [
    ...g.checks,
    ...g.groups.flatMap(walk),
  ];
  return walk(result.rootGroup as Group);
}

const EXAMPLES: Record<string, Example> = {
  'quickstart.js': {
    // The single-endpoint RPS test: a constant arrival rate, split over the runners.
    args: env({ RATE: '100', DURATION: '3s' }),
    check(result, before) {
      // 100/s for 3 s in all, 50/s per runner (a loaded machine may drop a few iterations).
      const requests = result.metrics.http_reqs!.values.count!;
      expect(requests).toBeGreaterThanOrEqual(250);
      expect(requests).toBeLessThanOrEqual(302);
      expect(count('GET /api/items', before)).toBe(requests);
    },
  },
  'user-journey.js': {
    args: env({ VUS: '4', RAMP: '1s', HOLD: '2s', THINK_MIN: '0.1', THINK_MAX: '0.3' }),
    check(result, before) {
      const iterations = result.metrics.iterations!.values.count!;
      expect(iterations).toBeGreaterThan(0);
      // Each journey logs in, lists, opens a product, adds to the cart and checks out.
      for (const step of [
        'POST /api/login',
        'GET /api/products',
        'GET /api/products/:id',
        'POST /api/checkout',
      ])
        expect(count(step, before), step).toBe(iterations);
      expect(allChecks(result).map((c) => c.name)).toEqual(
        expect.arrayContaining([
          'logged in',
          'catalogue listed',
          'product shown',
          'added to cart',
          'order placed',
        ]),
      );
      // Think time: far fewer requests than VUs could send back to back.
      expect(result.metrics.http_reqs!.values.rate!).toBeLessThan(100);
      expect(result.thresholds.map((t) => t.metric)).toContain('group_duration{group:::checkout}');
    },
  },
  'large-run.js': {
    args: env({ VUS: '4', DURATION: '3s' }),
    check(result) {
      // discardResponseBodies, except for the one request that asks for its body: its check reads it.
      const hasItems = allChecks(result).find((c) => c.name === 'items: has items')!;
      expect(hasItems.passes).toBeGreaterThan(0);
      expect(hasItems.fails).toBe(0);
      expect(result.thresholds.find((t) => t.metric === 'http_req_failed')!.abortOnFail).toBe(true);
    },
  },
  'scenarios.js': {
    args: env({ DURATION: '3s', BROWSE_RATE: '40', CHECKOUT_VUS: '2', THINK: '0.2' }),
    check(result) {
      // Each scenario's submetrics exist and are judged on the aggregate.
      const browse = result.metrics['http_req_duration{scenario:browse}']!.values.count!;
      expect(browse).toBeGreaterThanOrEqual(100); // 40/s for 3 s
      expect(browse).toBeLessThanOrEqual(122);
      expect(result.metrics['iterations{scenario:checkout}']!.values.count!).toBeGreaterThan(0);
      expect(result.thresholds.map((t) => t.metric)).toEqual(
        expect.arrayContaining([
          'http_req_duration{scenario:browse}',
          'http_req_duration{scenario:checkout}',
          'http_req_duration{flow:checkout,name:POST /api/checkout}',
          'checks{flow:checkout}',
        ]),
      );
    },
  },
  'setup-data.js': {
    args: env({ VUS: '4', DURATION: '3s', THINK: '0.2' }),
    check(result, before) {
      // setup() and teardown() run once for the whole test, as in one `k6 run`.
      expect(shop.logins.at(-1)).toBe('load-test');
      expect(count('POST /api/login', before)).toBe(1);
      expect(count('POST /api/logout', before)).toBe(1);
      // The VUs used the setup data (the token and the product ids) on every iteration.
      expect(count('GET /api/products/:id', before)).toBe(result.metrics.iterations!.values.count);
      expect(result.metrics['http_req_duration{scenario:default}']!.values.count).toBe(
        result.metrics.iterations!.values.count,
      );
    },
  },
};

describe('examples/*.js with the local backend', () => {
  it('every script in examples/ is run here', () => {
    const scripts = readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.js'));
    expect(scripts.sort()).toEqual(Object.keys(EXAMPLES).sort());
  });

  it.each(Object.keys(EXAMPLES).filter((f) => f !== 'quickstart.js'))(
    '%s reads its target from __ENV.BASE_URL, with a default',
    (file) => {
      expect(readFileSync(path.join(ROOT, 'examples', file), 'utf8')).toContain('__ENV.BASE_URL ||');
    },
  );

  it.each(Object.entries(EXAMPLES))(
    '%s runs on 2 runners and passes its thresholds',
    async (file, example) => {
      const before = new Map(shop.counts);
      const run = await runCli([
        'run',
        path.join(ROOT, 'examples', file),
        '--runners',
        '2',
        '--',
        ...env({ BASE_URL: shop.url }),
        ...example.args,
      ]);
      expect(run.code, run.stderr).toBe(0);
      const result = run.result!;
      expect(result.verdict).toBe('passed');
      expect(result.runners.map((r) => r.exit)).toEqual(['exit 0: completed', 'exit 0: completed']);
      expect(result.thresholds.length).toBeGreaterThan(0);
      expect(result.thresholds.filter((t) => !t.ok)).toEqual([]);
      const checks = allChecks(result);
      expect(checks.length).toBeGreaterThan(0);
      expect(checks.filter((c) => c.fails > 0)).toEqual([]);
      example.check(result, before);
    },
  );
});

describe('examples/*.yaml', () => {
  const docs = (file: string) =>
    readFileSync(path.join(ROOT, 'examples', file), 'utf8')
      .split(/^---$/m)
      .map((d, i) => parseYaml(d, `${file} document ${i + 1}`));

  it('node-pool.yaml labels and taints the pool as the workflows select and tolerate it', () => {
    const pool = dig(readYaml('workflows/perf-large.yml'), 'on.workflow_dispatch.inputs.node-pool.default');
    expect(pool).toBe('loadtest');
    const steps = dig(readYaml('workflows/perf-pr.yml'), 'jobs.load-test.steps') as Array<{ id?: string }>;
    const k6 = steps.find((s) => s.id === 'k6');
    expect(dig(k6, 'with.node-selector')).toBe(`pool=${pool}`);
    expect(parseYaml(dig(k6, 'with.tolerations') as string, 'tolerations')).toEqual([
      { key: 'dedicated', operator: 'Equal', value: pool, effect: 'NoSchedule' },
    ]);
    const taint = { key: 'dedicated', value: pool, effect: 'NoSchedule' };
    const [node, eksctl, karpenter] = docs('node-pool.yaml');
    expect(dig(node, 'metadata.labels')).toEqual({ pool });
    expect(dig(node, 'spec.taints')).toEqual([taint]);
    expect(dig(eksctl, 'managedNodeGroups.0.labels')).toEqual({ pool });
    expect(dig(eksctl, 'managedNodeGroups.0.taints')).toEqual([taint]);
    expect(dig(karpenter, 'spec.template.metadata.labels')).toEqual({ pool });
    expect(dig(karpenter, 'spec.template.spec.taints')).toEqual([taint]);
    expect(dig(karpenter, 'spec.disruption.consolidationPolicy')).toBe('WhenEmpty');
  });

  it('os-tuning.yaml widens the local port range of the runner Pods, a safe sysctl', () => {
    const [pod, kubelet] = docs('os-tuning.yaml');
    const sysctls = dig(pod, 'spec.securityContext.sysctls');
    expect(sysctls).toEqual([{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }]);
    // It is what the run action's sysctls input gives a runner Pod.
    const inputs = readRunInputs(
      (name) => ({ script: 'a.js', sysctls: 'net.ipv4.ip_local_port_range=1024 65535' })[name] ?? '',
    );
    const runner = runnerPod(
      {
        runId: 'r1',
        namespace: 'load-tests',
        image: 'grafana/k6:2.2.0',
        plan: planRun({ runners: 1, maxVUs: 1 }),
        placement: { spread: 'none' },
        sysctls: inputs.sysctls,
        activeDeadlineSeconds: 60,
      },
      { index: 0, segment: '0:1' },
      { name: 'k6d-r1', uid: 'u' },
    );
    expect(runner.spec!.securityContext!.sysctls).toEqual(sysctls);
    // Kubernetes' safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go) need no kubelet change.
    expect(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies']).toContain(
      dig(sysctls, '0.name'),
    );
    expect(dig(kubelet, 'allowedUnsafeSysctls')).toEqual(['net.ipv4.tcp_tw_reuse']);
  });
});
