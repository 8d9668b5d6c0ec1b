import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  type CleanupApi,
  type CleanupDeps,
  cleanUpRun,
  deleteRunObjects,
  keepsObjects,
  removeLeftovers,
} from '../../../../src/backends/kubernetes/cleanup.ts';
import { FakeBackendClock, runnerPodObject } from './support/fakes.ts';

/**
 * A fake API for the run `r1` whose Pods are listed as `podLists` gives them in turn (the last
 * repeats); every call is recorded in `calls`, in order.
 */
function fakeApi(podLists: V1Pod[][], calls: string[], refuse: { configMaps?: boolean } = {}): CleanupApi {
  let listed = 0;
  return {
    listNamespacedConfigMap: async ({ labelSelector }: { labelSelector?: string }) => {
      calls.push(`list ConfigMaps ${labelSelector}`);
      if (refuse.configMaps) throw Object.assign(new Error('forbidden'), { code: 403 });
      return { items: [{ metadata: { name: 'k6d-r1' } }] };
    },
    deleteNamespacedConfigMap: async ({
      name,
      propagationPolicy,
    }: {
      name: string;
      propagationPolicy?: string;
    }) => {
      calls.push(`delete ConfigMap ${name} ${propagationPolicy}`);
      return {};
    },
    listNamespacedPod: async () => {
      calls.push('list Pods');
      return { items: podLists[Math.min(listed++, podLists.length - 1)]! };
    },
    deleteNamespacedPod: async ({
      name,
      gracePeriodSeconds,
    }: {
      name: string;
      gracePeriodSeconds?: number;
    }) => {
      calls.push(`delete Pod ${name} grace ${gracePeriodSeconds}`);
      return {} as V1Pod;
    },
  } as unknown as CleanupApi;
}

const running = (i: number) => runnerPodObject(i, { phase: 'Running' });

function deps(
  policy: CleanupDeps['policy'],
  calls: string[],
  podLists: V1Pod[][],
  overrides: Partial<CleanupDeps> = {},
) {
  const clock = new FakeBackendClock();
  const info: string[] = [];
  const warnings: string[] = [];
  const d: CleanupDeps = {
    api: fakeApi(podLists, calls),
    clock,
    namespace: 'load',
    runId: 'r1',
    policy,
    log: { info: (m) => info.push(m), warning: (m) => warnings.push(m) },
    pods: new Map(podLists[0]!.map((p, i) => [i, p])),
    exited: () => false,
    allCompleted: false,
    stop: () => calls.push('stop'),
    closeConnections: () => calls.push('close connections'),
    ...overrides,
  };
  return { d, clock, info, warnings };
}

describe('cleanup', () => {
  it('keeps the objects with never, and with on-success when a runner did not complete', () => {
    expect(keepsObjects('never', true)).toBe(true);
    expect(keepsObjects('on-success', false)).toBe(true);
    expect(keepsObjects('on-success', true)).toBe(false);
    expect(keepsObjects('always', false)).toBe(false);
  });

  it('stops the background work first, deletes the ConfigMap before the Pods, waits for them, and closes the connections last', async () => {
    const calls: string[] = [];
    // Both Pods listed, then runner 1's still terminating (the same Pod), then none.
    const { d, clock } = deps('always', calls, [[running(0), running(1)], [running(1)], []]);
    const began = clock.now();
    await clock.runUntil(cleanUpRun(d));
    expect(calls).toEqual([
      'stop',
      'list ConfigMaps k6-distributed.io/run-id=r1',
      'delete ConfigMap k6d-r1 Background',
      'list Pods',
      'delete Pod k6d-r1-0 grace 0',
      'delete Pod k6d-r1-1 grace 0',
      // Listed again at once after the deletes; a Pod already deleted is not deleted again while it terminates.
      'list Pods',
      'list Pods',
      'close connections',
    ]);
    // One wait only: for the Pod still terminating after the list that followed the deletes.
    expect(clock.now() - began).toBe(250);
  });

  it('with on-success after a failure, keeps the objects, stops only the runners still running, and says how to delete them', async () => {
    const calls: string[] = [];
    const ended = runnerPodObject(1, { phase: 'Failed' });
    // Runner 2's exit is known though its Pod's phase lags behind.
    const { d, clock, info } = deps('on-success', calls, [[running(0), ended, running(2)]], {
      exited: (i) => i === 2,
    });
    await clock.runUntil(cleanUpRun(d));
    expect(calls).toEqual(['stop', 'delete Pod k6d-r1-0 grace 0', 'close connections']);
    expect(info).toEqual([
      "cleanup on-success: kept the run's objects; delete them with: kubectl delete configmap,pod -n load -l k6-distributed.io/run-id=r1",
    ]);
  });

  it('gives up waiting after waitS and names what is left, and a list refused as left unlisted', async () => {
    const calls: string[] = [];
    const clock = new FakeBackendClock();
    const warnings: string[] = [];
    const left = await clock.runUntil(
      deleteRunObjects({
        api: fakeApi([[running(0)]], calls, { configMaps: true }),
        clock,
        namespace: 'load',
        runId: 'r1',
        log: { warning: (m) => warnings.push(m) },
        waitS: 5,
      }),
    );
    expect(left).toEqual(['the ConfigMaps of run r1 (unlisted)', 'Pod k6d-r1-0']);
    expect(warnings).toEqual([
      'cleanup: listing the ConfigMaps of run r1 failed: forbidden',
      'cleanup: still present after 5 s: the ConfigMaps of run r1 (unlisted), Pod k6d-r1-0',
    ]);
    // Listed again at once after its delete, then every 250 ms for 5 s; the Pod deleted once.
    expect(calls.filter((c) => c === 'list Pods').length).toBe(23);
    expect(calls.filter((c) => c.startsWith('delete Pod')).length).toBe(1);
  });
});

describe("removing what dead runs left (the CLI's cleanup command)", () => {
  it('names every ConfigMap and Pod it removed, listed before the garbage collector takes the Pods', async () => {
    const calls: string[] = [];
    const clock = new FakeBackendClock();
    const done = await clock.runUntil(
      removeLeftovers({
        api: fakeApi([[running(0), running(1)], [running(0), running(1)], []], calls),
        clock,
        namespace: 'load',
        labelSelector: 'k6-distributed.io/run-id=r1',
        log: { warning: () => {} },
        waitS: 60,
      }),
    );
    expect(done).toEqual({ removed: ['ConfigMap k6d-r1', 'Pod k6d-r1-0', 'Pod k6d-r1-1'], left: [] });
    expect(calls).toContain('delete ConfigMap k6d-r1 Background');
    expect(calls).toContain('delete Pod k6d-r1-1 grace 0');
  });

  it('deletes nothing when nothing is there', async () => {
    const calls: string[] = [];
    const api = fakeApi([[]], calls);
    const done = await removeLeftovers({
      api: { ...api, listNamespacedConfigMap: async () => ({ items: [] }) } as CleanupApi,
      clock: new FakeBackendClock(),
      namespace: 'load',
      labelSelector: 'k6-distributed.io/run-id=gone',
      log: { warning: () => {} },
      waitS: 60,
    });
    expect(done).toEqual({ removed: [], left: [] });
    expect(calls.filter((c) => c.startsWith('delete'))).toEqual([]);
  });
});
