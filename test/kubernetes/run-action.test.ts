import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { k6Binary } from '../equivalence/harness.ts';
import { type ActionStep, runAction, startAction } from '../support/action.ts';
import { tempDir, writeScript } from '../support/cli.ts';
import { leftovers } from './support/objects.ts';

// The bundled dist/run.js, run the way GitHub runs it, against a real kube-apiserver, controller
// manager and scheduler (test/cluster) and real nodes: kubelets with containerd, so every runner
// Pod is a container of the runner image (k6 and its libraries, no shell) under runc.

const kubeconfig = () => readFileSync(process.env.KUBECONFIG!, 'utf8');
const kc = new KubeConfig();
let target: RecordingTarget;

const DEDICATED = {
  'node-selector': 'k6-distributed.test/pool=loadtest',
  tolerations: '[{key: k6-distributed.test/dedicated, operator: Equal, value: loadtest, effect: NoSchedule}]',
};

beforeAll(async () => {
  kc.loadFromFile(process.env.KUBECONFIG!);
  // The runner Pods reach the target on the bridge the harness made (their only route).
  target = await startNodeTarget(process.env.K6D_POD_GATEWAY!);
});
afterAll(async () => {
  await target.stop();
});

afterEach(async () => {
  expect(await leftovers(kc)).toEqual([]);
});

function resultOf(step: ActionStep, workspace: string): RunResult {
  return JSON.parse(readFileSync(path.join(workspace, step.outputs['result-path']!), 'utf8')) as RunResult;
}

/** The step's `::error::` annotations (warnings may come before them). */
const errorsOf = (step: ActionStep) => step.annotations.filter((a) => a.startsWith('::error::'));

async function waitFor(text: () => string, needle: string, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!text().includes(needle) && Date.now() - t0 < timeoutMs)
    await new Promise((r) => setTimeout(r, 100));
}

const sharedIterations = writeScript(`
import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 8, iterations: 1000 } },
  thresholds: { http_req_duration: ['p(95)<5000'], http_reqs: ['count==1000'] },
};
export default function () { http.get(__ENV.TARGET + '/k8s', { headers: { 'x-runner': __ENV.K6D_RUNNER_INDEX } }); }
`);

describe('run action on Kubernetes', () => {
  it('lands 4 runners one per dedicated node, starts them together and gives the same total as the local backend', async () => {
    const before = target.arrivals.length;
    const workspace = tempDir('k6d-k8s-');
    const step = await runAction(
      'dist/run.js',
      {
        script: sharedIterations,
        runners: '4',
        kubeconfig: kubeconfig(),
        ...DEDICATED,
        'k6-args': `-e TARGET=${target.url}`,
      },
      { workspace },
    );
    expect(step.code, step.stdout).toBe(0);
    expect(step.outputs.verdict).toBe('passed');
    const result = resultOf(step, workspace);
    expect(result.environment).toMatchObject({
      backend: 'kubernetes',
      runners: 4,
      runnerImage: 'grafana/k6:2.2.0',
    });
    const nodes = result.runners.map((r) => r.node);
    expect(new Set(nodes).size).toBe(4);
    for (const node of nodes) expect(node).toMatch(/^k6d-loadtest-\d+$/);
    // The same iteration total as the local backend gives for this script (test/e2e/local-run.test.ts).
    expect(result.metrics.iterations!.values.count).toBe(1000);
    const arrivals = target.arrivals.slice(before).filter((a) => a.path === '/k8s');
    expect(arrivals).toHaveLength(1000);
    const first = new Map<string, number>();
    for (const a of arrivals) if (!first.has(a.runner!)) first.set(a.runner!, a.at);
    const firsts = [...first.values()];
    expect(first.size).toBe(4);
    expect(Math.max(...firsts) - Math.min(...firsts)).toBeLessThan(250);
    // startedAt is the scheduled instant read into this machine's clock by the bound the barrier
    // lines give ("this clock is at most X ms ahead", ScheduledStart.startedAtMs): the test's nodes
    // share this clock, so X is the lines' least delay, and startedAt may be late by that much,
    // never more. The first request may not come before the instant.
    const bound = /this clock is at most (-?\d+) ms ahead/.exec(step.stdout);
    expect(bound, step.stdout).not.toBeNull();
    const startedAt = Date.parse(result.startedAt);
    expect(Math.min(...firsts)).toBeGreaterThanOrEqual(startedAt - Number(bound![1]) - 2);
    expect(Math.min(...firsts)).toBeLessThan(startedAt + 250);
    expect(Number(step.outputs['start-skew'])).toBe(result.startSkewMs);
    expect(step.summary).toContain('start skew');
    expect(step.summary).toContain('k6d-loadtest-');
  });

  it("reads the vus gauge from every runner's barrier container, as plain k6 run reports it", async () => {
    const ramp = `import { sleep } from 'k6';
export const options = { scenarios: { ramp: { executor: 'ramping-vus', startVUs: 0, gracefulRampDown: '0s',
  stages: [{ duration: '2s', target: 8 }, { duration: '2s', target: 8 }] } } };
export default function () { sleep(0.1); }
`;
    const workspace = tempDir('k6d-k8s-');
    const step = await runAction(
      'dist/run.js',
      { script: writeScript(ramp), runners: '4', kubeconfig: kubeconfig(), ...DEDICATED },
      { workspace },
    );
    expect(step.code, step.stdout).toBe(0);
    const vus = resultOf(step, workspace).metrics.vus!.values;
    // Plain k6 of the same script, on this machine.
    const dir = tempDir('k6d-plain-');
    writeFileSync(path.join(dir, 'ramp.js'), ramp);
    execFileSync(k6Binary(), ['run', '--quiet', '--summary-export', 'k6.json', 'ramp.js'], { cwd: dir });
    const plain = JSON.parse(readFileSync(path.join(dir, 'k6.json'), 'utf8')).metrics.vus;
    console.log(`vus: kubernetes ${JSON.stringify(vus)}, plain k6 ${JSON.stringify(plain)}`);
    expect(vus.max).toBe(plain.max);
    expect(vus.max).toBe(8);
    // The ramp's first VUs: k6 samples its gauge once a second, the runners twice.
    expect(vus.min).toBeLessThanOrEqual(Math.max(plain.min, 2));
  });

  it('fails naming a runner that crashes mid-test, stops the others and removes everything', async () => {
    const script = writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = { vus: 4, duration: '30s' };
export default function () {
  http.get(__ENV.TARGET + '/crash');
  if (__ENV.K6D_RUNNER_INDEX === '1' && exec.scenario.iterationInInstance === 3) exec.test.abort('runner one gives up');
  sleep(0.2);
}
`);
    const workspace = tempDir('k6d-k8s-');
    const started = Date.now();
    const step = await runAction(
      'dist/run.js',
      { script, runners: '4', kubeconfig: kubeconfig(), ...DEDICATED, 'k6-args': `-e TARGET=${target.url}` },
      { workspace },
    );
    expect(step.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(25_000);
    const result = resultOf(step, workspace);
    expect(result.failures[0]).toMatch(
      /runner 1 failed \(exit 108: the script called test.abort\(\)\).*runner one gives up/,
    );
    expect(result.runners.map((r) => r.exitCode)).toEqual([103, 108, 103, 103]);
    // Every runner, the stopped ones too, handed over its summary through its Pod log.
    expect(result.failures.filter((f) => f.includes('summary'))).toEqual([]);
    expect(result.metrics.http_reqs!.values.count).toBeGreaterThan(0);
    expect(step.annotations.filter((a) => a.startsWith('::error::'))).toEqual([
      expect.stringMatching(/^::error::k6 distributed run failed: runner 1 failed/),
    ]);
  });

  it('gives a clear error for a placement no node can meet, within the timeout, and cleans up', async () => {
    const started = Date.now();
    const step = await runAction('dist/run.js', {
      script: sharedIterations,
      runners: '2',
      kubeconfig: kubeconfig(),
      'node-selector': 'k6-distributed.test/pool=gpu',
      'schedule-timeout': '3',
      'k6-args': `-e TARGET=${target.url}`,
    });
    expect(step.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
    // The scheduler's reason as soon as it gave it, once for both runners (the same message).
    expect(step.annotations.filter((a) => a.includes('cannot be placed yet'))).toEqual([
      expect.stringMatching(
        /^::warning::runner \d cannot be placed yet \(Pod k6d-\S+ is Unschedulable\): 0\/5 nodes/,
      ),
    ]);
    // A Pod that never ran has no log: said so, rather than the error its read gives.
    expect(errorsOf(step)).toEqual([
      expect.stringMatching(
        /runner \d failed before the start \(Pod k6d-.* could not be placed within 3 s: 0\/5 nodes are available: .*node affinity\/selector.*\): \(Pod k6d-\S+ never started: it has no log\)/,
      ),
    ]);
  });

  it('needs every runner on its own node: 5 runners on 4 dedicated nodes cannot be placed', async () => {
    const step = await runAction('dist/run.js', {
      script: sharedIterations,
      runners: '5',
      kubeconfig: kubeconfig(),
      ...DEDICATED,
      'schedule-timeout': '3',
      'k6-args': `-e TARGET=${target.url}`,
    });
    expect(step.code).toBe(1);
    expect(errorsOf(step)).toEqual([
      expect.stringMatching(/could not be placed within 3 s: .*anti-affinity/),
    ]);
    // The -e values are in the runner Pods' env: named (never their values) with the alternative.
    expect(step.annotations).toContainEqual(
      expect.stringMatching(
        /^::warning::-e TARGET: their values are in every runner Pod's environment .*secret-env/,
      ),
    );
  });

  it('fails early on an image that cannot be pulled', async () => {
    const step = await runAction('dist/run.js', {
      script: sharedIterations,
      runners: '2',
      kubeconfig: kubeconfig(),
      ...DEDICATED,
      'runner-image': 'example.com/does-not-exist/k6:1',
      'k6-args': `-e TARGET=${target.url}`,
    });
    expect(step.code).toBe(1);
    expect(errorsOf(step)).toEqual([expect.stringMatching(/Pod k6d-.*: (ErrImagePull|ImagePullBackOff)/)]);
  });

  it('lists every missing permission before creating anything', async () => {
    const step = await runAction('dist/run.js', {
      script: sharedIterations,
      runners: '2',
      kubeconfig: readFileSync(process.env.K6D_LIMITED_KUBECONFIG!, 'utf8'),
      'k6-args': `-e TARGET=${target.url}`,
    });
    expect(step.code).toBe(1);
    expect(step.annotations).toEqual([
      '::error::permissions: the credentials lack in namespace default: create configmaps, get configmaps, list configmaps, delete configmaps, create pods, get pods, list pods, watch pods, delete pods, get pods/log, get pods/proxy, patch pods/proxy, create pods/proxy, update pods/proxy (examples/rbac.yaml grants what is needed)',
    ]);
  });

  it('refuses an archive too big for a ConfigMap before creating anything', async () => {
    const dir = tempDir('k6d-big-');
    writeFileSync(path.join(dir, 'data.bin'), Buffer.alloc(1_500_000, 7));
    writeFileSync(
      path.join(dir, 'big.js'),
      `const data = open('./data.bin', 'b');\nexport default function () { if (!data) throw new Error('x'); }\n`,
    );
    const step = await runAction('dist/run.js', {
      script: path.join(dir, 'big.js'),
      kubeconfig: kubeconfig(),
    });
    expect(step.code).toBe(1);
    expect(step.annotations[0]).toMatch(
      /^::error::script: its k6 archive is 1\.\d\d MiB, more than a ConfigMap holds/,
    );
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'on cancellation (%s) stops the runners and leaves nothing',
    async (signal) => {
      const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 4, duration: '60s' };
export default function () { http.get(__ENV.TARGET + '/cancel'); sleep(0.1); }
`);
      const { child, done } = startAction('dist/run.js', {
        script,
        runners: '4',
        kubeconfig: kubeconfig(),
        ...DEDICATED,
        'k6-args': `-e TARGET=${target.url}`,
      });
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
      });
      await waitFor(() => out, 'started 4 runners');
      await new Promise((r) => setTimeout(r, 1000));
      child.kill(signal);
      const step = await done;
      expect(step.outputs.verdict).toBe('failed');
      expect(step.annotations.join('\n')).toMatch(/interrupted/);
      // The post step sees that the main step cleaned up and does nothing.
      const post = await runAction(
        'dist/run-post.js',
        { kubeconfig: kubeconfig(), script },
        { state: step.state },
      );
      expect(post.code).toBe(0);
      expect(post.stdout).not.toContain('did not finish its cleanup');
    },
  );

  it('post step removes what a killed main step left behind', async () => {
    const script = writeScript(`
import { sleep } from 'k6';
export const options = { vus: 2, duration: '60s' };
export default function () { sleep(0.5); }
`);
    const { child, done } = startAction('dist/run.js', {
      script,
      runners: '2',
      kubeconfig: kubeconfig(),
      ...DEDICATED,
    });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
    });
    await waitFor(() => out, 'started 2 runners');
    // The Actions runner kills a step that outlives its cancellation grace period.
    child.kill('SIGKILL');
    const step = await done;
    expect(step.state.runId).toMatch(/^r[a-z0-9]+$/);
    expect((await leftovers(kc)).length).toBeGreaterThan(0);
    const post = await runAction(
      'dist/run-post.js',
      { kubeconfig: kubeconfig(), script },
      { state: step.state },
    );
    expect(post.code).toBe(0);
    expect(post.stdout).toContain(`post: removed every object of run ${step.state.runId}`);
  });
});
