import { describe, expect, it } from 'vitest';
import { classifyPod, disruptionOf } from '../../../../src/backends/kubernetes/pods.ts';
import { describeExit } from '../../../../src/k6/exit-codes.ts';

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
            {
              name: 'k6',
              image: 'x',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } },
            },
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
          containerStatuses: [
            {
              name: 'k6',
              image: 'x',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 137, reason: 'OOMKilled' } },
            },
          ],
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
