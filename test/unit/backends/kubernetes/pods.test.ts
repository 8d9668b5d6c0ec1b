import type { V1ContainerState } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  classifyPod,
  disruptionOf,
  RunnerPods,
  type WatchPods,
} from '../../../../src/backends/kubernetes/pods.ts';
import { describeExit } from '../../../../src/k6/exit-codes.ts';
import { FakeBackendClock } from './support/fakes.ts';

/** A not-ready `k6` container's status (core/v1 ContainerStatus) in the given state. */
const containerStatus = (state: V1ContainerState) => ({
  name: 'k6',
  image: 'x',
  imageID: '',
  ready: false,
  restartCount: 0,
  state,
});

describe('disruptions', () => {
  it('names evictions and preemptions from the DisruptionTarget condition or the kubelet', () => {
    const withCondition = (reason: string, message: string) =>
      disruptionOf({
        status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason, message }] },
      });
    expect(withCondition('EvictionByEvictionAPI', 'Eviction API: evicting')).toEqual({
      what: 'evicted',
      by: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    });
    expect(withCondition('PreemptionByScheduler', 'preempted by p')?.what).toBe('preempted');
    expect(
      disruptionOf({
        status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' },
      }),
    ).toEqual({ what: 'evicted', message: 'The node was low on resource: memory.' });
    expect(disruptionOf({ status: { phase: 'Running' } })).toBeUndefined();
  });
});

describe('Pod states', () => {
  it('fails a runner whose init container (a pod-patch) failed or cannot start, naming it', () => {
    const waitingK6 = [
      {
        name: 'k6',
        ready: false,
        restartCount: 0,
        image: 'k6',
        imageID: '',
        state: { waiting: { reason: 'PodInitializing' } },
      },
    ];
    const init = (state: object) => ({
      metadata: { name: 'p' },
      status: {
        phase: 'Failed',
        containerStatuses: waitingK6,
        initContainerStatuses: [
          {
            name: 'ok',
            ready: true,
            restartCount: 0,
            image: 'b',
            imageID: '',
            state: { terminated: { exitCode: 0 } },
          },
          { name: 'fetch', ready: false, restartCount: 0, image: 'b', imageID: '', state },
        ],
      },
    });
    expect(classifyPod(init({ terminated: { exitCode: 3, reason: 'Error' } }))).toEqual({
      kind: 'failed',
      pod: 'p',
      reason: 'init container fetch exited with code 3',
    });
    expect(classifyPod(init({ waiting: { reason: 'ErrImagePull', message: 'not found' } }))).toEqual({
      kind: 'failed',
      pod: 'p',
      reason: 'init container fetch: ErrImagePull: not found',
    });
    // Still running, or waiting to: the runner is pending.
    const running = init({ running: {} });
    running.status.phase = 'Pending';
    expect(classifyPod(running)).toEqual({ kind: 'pending', pod: 'p' });
  });

  it('never fails a runner for its interval receiver: not pulled, or killed', () => {
    const pod = (receiver: object, phase = 'Running') => ({
      metadata: { name: 'p' },
      status: {
        phase,
        containerStatuses: [
          { ...containerStatus(receiver), name: 'interval-receiver' },
          containerStatus({ running: {} }),
          { ...containerStatus({ running: {} }), name: 'barrier' },
        ],
      },
    });
    // A container that waits keeps the Pod Pending (kubelet getPhase) while k6 runs.
    const pull = pod({ waiting: { reason: 'ImagePullBackOff', message: 'x' } }, 'Pending');
    expect(classifyPod(pull)).toMatchObject({ kind: 'running', pod: 'p' });
    const killed = pod({ terminated: { exitCode: 137, reason: 'Error' } });
    expect(classifyPod(killed)).toMatchObject({ kind: 'running', pod: 'p' });
  });

  it('tells unschedulable, image pull errors, OOM kills and exit codes apart', () => {
    expect(
      classifyPod({
        metadata: { name: 'p' },
        status: {
          phase: 'Pending',
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message: '0/5 nodes are available',
            },
          ],
        },
      }),
    ).toEqual({ kind: 'pending', pod: 'p', unschedulable: '0/5 nodes are available' });
    expect(
      classifyPod({
        metadata: { name: 'p' },
        status: {
          containerStatuses: [
            containerStatus({ waiting: { reason: 'ImagePullBackOff', message: 'not found' } }),
          ],
        },
      }),
    ).toEqual({ kind: 'failed', pod: 'p', reason: 'ImagePullBackOff: not found' });
    expect(
      classifyPod({
        metadata: { name: 'p' },
        spec: { nodeName: 'n1', containers: [] },
        status: {
          phase: 'Failed',
          containerStatuses: [containerStatus({ terminated: { exitCode: 137, reason: 'OOMKilled' } })],
        },
      }),
    ).toEqual({ kind: 'ended', pod: 'p', code: 137, reason: 'OOMKilled', node: 'n1' });
    expect(describeExit(137, 'OOMKilled')).toBe('exit 137: failed (OOMKilled)');
  });

  it("tells the barrier container's states apart: its log is followed once it runs", () => {
    const k6 = { name: 'k6', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} } };
    const barrierIn = (state: object) =>
      classifyPod({
        metadata: { name: 'p' },
        status: {
          phase: 'Running',
          containerStatuses: [
            k6,
            { name: 'barrier', image: 'x', imageID: '', ready: false, restartCount: 0, state },
          ],
        },
      });
    expect(barrierIn({ waiting: { reason: 'ContainerCreating' } })).toMatchObject({ barrier: 'starting' });
    expect(barrierIn({ running: {} })).toMatchObject({ barrier: 'running' });
    expect(barrierIn({ terminated: { exitCode: 0 } })).toMatchObject({ barrier: 'exited' });
    expect(barrierIn({ terminated: { exitCode: 108 } })).toMatchObject({ barrier: 'failed' });
  });
});

describe('the Pod watch', () => {
  /**
   * A run's Pod watch whose watches each open and then end as `end` says: client-node's Watch ends
   * one that got no data for 30 s with a TimeoutError (its `requestTimeoutMs`), after it opened.
   */
  async function watching(end: (opened: number) => unknown) {
    const clock = new FakeBackendClock();
    const warnings: string[] = [];
    const queries: Array<Record<string, string | boolean>> = [];
    const watch: WatchPods = async (_path, query, _onEvent, onDone) => {
      queries.push(query);
      const opened = queries.length;
      setImmediate(() => onDone(end(opened)));
      return { abort: () => {} };
    };
    const pods = new RunnerPods({
      api: { listNamespacedPod: async () => ({ metadata: { resourceVersion: '7' }, items: [] }) } as never,
      watch,
      namespace: 'load',
      runId: 'r1',
      log: { warning: (m: string) => warnings.push(m) },
      clock,
    });
    await pods.start();
    for (let i = 0; i < 20; i++) await clock.advance(1_000);
    pods.stop();
    return { warnings, queries };
  }

  it('takes a quiet watch that timed out (no Pod changed for 30 s) as normal: it is resumed at once, without a warning', async () => {
    const timeout = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const { warnings, queries } = await watching(timeout);
    expect(warnings).toEqual([]);
    expect(queries.length).toBeGreaterThan(5);
    expect(queries.every((q) => q.resourceVersion === '7')).toBe(true);
  });

  it('still warns when watches keep failing otherwise', async () => {
    const { warnings } = await watching(() => new Error('connect ECONNREFUSED 10.0.0.1:6443'));
    expect(warnings).toEqual(['watching runner Pods keeps failing: connect ECONNREFUSED 10.0.0.1:6443']);
  });
});
