import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect } from 'vitest';
import { LABELS } from '../../src/backends/kubernetes/names.ts';
import { LIFETIME_MARGIN_S } from '../../src/run/launch.ts';
import { leftovers } from '../kubernetes/support/objects.ts';
import { type CliRun, runCli, startCli, writeScript } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';
import { type FaultOutcome, faultTable, shellExitCode } from './table.ts';

// The Kubernetes rows of the fault table (in the cluster project: a real kube-apiserver, scheduler,
// controller manager and real kubelets with containerd): the CLI with `--backend kubernetes` is
// killed with SIGKILL mid-test, so nothing of it can clean up. Its runners must not be left for a
// day: `k6-distributed cleanup --run-id` removes them, and without it the runner Pods' deadline
// (src/run/launch.ts `runLifetimeS`) ends them on their own soon after the test's end.

const NAMESPACE = 'k6d-faults';
const kc = new KubeConfig();
let core: CoreV1Api;

beforeAll(async () => {
  kc.loadFromFile(process.env.KUBECONFIG!);
  core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
});
afterAll(async () => {
  await core.deleteNamespace({ name: NAMESPACE }).catch(() => {});
});

/** The cluster flags of every run and cleanup here (the child's own KUBECONFIG points nowhere). */
const CLUSTER = () => ['--kubeconfig', process.env.KUBECONFIG!, '--namespace', NAMESPACE];
const CHILD_ENV = { KUBECONFIG: '/nonexistent/kubeconfig' };
const DEDICATED = [
  '--node-selector',
  'k6-distributed.test/pool=loadtest',
  '--tolerations',
  '[{key: k6-distributed.test/dedicated, operator: Equal, value: loadtest, effect: NoSchedule}]',
];

/**
 * A test of `seconds` of 2 idle VUs (no gracefulStop: its totalDuration is `seconds`), whose setup()
 * and teardown() may take 1 s each.
 */
const idle = (seconds: number) =>
  writeScript(`
import { sleep } from 'k6';
export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '${seconds}s', gracefulStop: '0s' } },
  setupTimeout: '1s',
  teardownTimeout: '1s',
};
export default function () { sleep(0.1); }
`);

/**
 * Starts `run --backend kubernetes` with 2 runners, waits until they started, and kills the CLI
 * with SIGKILL. @returns the killed CLI's outcome and its run id.
 */
async function killedMidTest(script: string, flags: string[] = []): Promise<{ run: CliRun; runId: string }> {
  const cli = startCli(
    ['run', script, '--runners', '2', '--backend', 'kubernetes', ...CLUSTER(), ...DEDICATED, ...flags],
    { env: CHILD_ENV },
  );
  let stderr = '';
  cli.child.stderr!.on('data', (d) => {
    stderr += d;
  });
  await waitFor(() => stderr.includes('started 2 runners') || cli.child.exitCode !== null, 'the start', {
    timeoutMs: 90_000,
    intervalMs: 100,
  });
  const runId = /run (\S+) in namespace/.exec(stderr)?.[1];
  expect(runId, stderr).toBeDefined();
  cli.child.kill('SIGKILL');
  const run = await cli.done;
  // Nothing of the CLI is left to clean up: the run's ConfigMap and its 2 Pods are there.
  expect(await leftovers(kc, NAMESPACE, runId)).toHaveLength(3);
  return { run, runId: runId! };
}

/** `k6-distributed cleanup --run-id ID` on the namespace. */
const cleanup = (runId: string) => runCli(['cleanup', '--run-id', runId, ...CLUSTER()], { env: CHILD_ENV });

/** The table's outcome of a killed CLI: what is left of its run is what the case ends with. */
async function outcome(run: CliRun, runId: string, stderr = run.stderr): Promise<FaultOutcome> {
  return {
    code: shellExitCode(run.code, run.signal ?? null),
    stderr,
    leftovers: await leftovers(kc, NAMESPACE, runId),
  };
}

faultTable('Kubernetes faults of the CLI', [
  {
    name: 'the CLI is killed (SIGKILL) mid-test: `cleanup --run-id` removes its ConfigMap and Pods, and says what it removed',
    code: 137,
    timeoutMs: 180_000,
    run: async () => {
      const { run, runId } = await killedMidTest(idle(120));
      const removed = await cleanup(runId);
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout.trim().split('\n').sort()).toEqual([
        `removed ConfigMap k6d-${runId}`,
        `removed Pod k6d-${runId}-0`,
        `removed Pod k6d-${runId}-1`,
      ]);
      // Again: nothing left to remove, which is no error.
      const again = await cleanup(runId);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe('');
      expect(again.stderr).toContain(
        `nothing to remove: no ConfigMap or Pod of run ${runId} in namespace ${NAMESPACE}`,
      );
      return outcome(run, runId, `${run.stderr}${removed.stderr}${again.stderr}`);
    },
  },
  {
    name: "the CLI is killed (SIGKILL) mid-test: its runners end on their own at the Pods' deadline, soon after the test",
    code: 137,
    timeoutMs: 240_000,
    run: async () => {
      // totalDuration 5 s, start timeout 10 s, grace 2 s, setup and teardown 1 s each, the stop
      // timeout (30 s) and the margin: a deadline of about 80 s from each Pod's start.
      const { run, runId } = await killedMidTest(idle(5), ['--start-timeout', '10', '--grace', '2']);
      const lifetimeS = 10 + 1 + 5 + 2 + 1 + 30 + LIFETIME_MARGIN_S;
      const pods = async () =>
        (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `${LABELS.runId}=${runId}` }))
          .items;
      const before = await pods();
      expect(before.map((p) => p.spec!.activeDeadlineSeconds)).toEqual([lifetimeS, lifetimeS]);
      // k6 lingers after its test (nobody ends it) until the kubelet ends the Pod at its deadline.
      const deadlineMs = Math.max(
        ...before.map((p) => Date.parse(String(p.status!.startTime)) + lifetimeS * 1000),
      );
      const ended = (p: V1Pod) => p.status?.phase === 'Failed' && p.status.reason === 'DeadlineExceeded';
      let last = before;
      while (!(last.length === 2 && last.every(ended))) {
        if (Date.now() > deadlineMs + 30_000)
          throw new Error(`30 s past the deadline, the runner Pods are ${last.map((p) => p.status?.phase)}`);
        await new Promise((r) => setTimeout(r, 1_000));
        last = await pods();
      }
      // Not before the deadline (the runners' clocks are this machine's).
      expect(Date.now()).toBeGreaterThanOrEqual(deadlineMs - 1_000);
      for (const pod of last)
        for (const c of pod.status!.containerStatuses ?? [])
          expect(c.state?.terminated, c.name).toBeDefined();
      // The ended Pods and the ConfigMap hold nothing running; the cleanup removes them.
      const removed = await cleanup(runId);
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout).toContain(`removed ConfigMap k6d-${runId}`);
      return outcome(run, runId, `${run.stderr}${removed.stderr}`);
    },
  },
]);
