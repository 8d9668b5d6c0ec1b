import { describe, expect, it } from 'vitest';
import { CHECK_EVERY_MS, LOST_AFTER_MS, RunnerExits } from '../../../../src/backends/kubernetes/exits.ts';
import type { PodState } from '../../../../src/backends/kubernetes/pods.ts';
import type { RunnerExit } from '../../../../src/plan.ts';
import {
  endedStatus,
  FakeBackendClock,
  FakeRunPods,
  RUNNING_STATUS,
  runnerPodObject,
  settle,
} from './support/fakes.ts';

/** Runner 0 of a run whose Pods are `pods`, watched for its exit; `exit()` is its exit once known. */
async function watched(
  clock: FakeBackendClock,
  initial = runnerPodObject(0, RUNNING_STATUS),
  memoryLimit?: string,
) {
  const run = await new FakeRunPods(clock, [initial]).start();
  const exits = new RunnerExits(
    run.pods,
    { scheduleTimeoutS: 60, ...(memoryLimit ? { memoryLimit } : {}) },
    clock,
  );
  const states: PodState['kind'][] = [];
  let lostCalls = 0;
  let exit: RunnerExit | undefined;
  void exits
    .watch(0, {
      onState: (s) => states.push(s.kind),
      onLost: () => lostCalls++,
    })
    .then((e) => {
      exit = e;
    });
  await settle();
  return { run, exits, states, exit: () => exit, lostCalls: () => lostCalls };
}

describe("a runner's exit, from its Pod", () => {
  it('is its exit code when k6 ends by itself, and every runner completed is a success', async () => {
    const clock = new FakeBackendClock();
    const w = await watched(clock);
    expect(w.exit()).toBeUndefined();
    expect(w.states).toContain('running');
    w.run.emit(runnerPodObject(0, endedStatus({ exitCode: 99 })));
    await settle();
    expect(w.exit()).toEqual({ code: 99 });
    expect(w.exits.has(0)).toBe(true);
    // 99 (thresholds failed) is a completed run; the cleanup policy on-success keeps nothing then.
    expect(w.exits.allCompleted(1)).toBe(true);
    expect(w.exits.allCompleted(2)).toBe(false);
  });

  it('names OOMKilled with the node and the memory limit the user set', async () => {
    const clock = new FakeBackendClock();
    const w = await watched(clock, undefined, '256Mi');
    w.run.emit(runnerPodObject(0, endedStatus({ exitCode: 137, reason: 'OOMKilled' })));
    await settle();
    expect(w.exit()).toEqual({
      code: 137,
      signal: 'OOMKilled',
      reason:
        'runner 0 was OOMKilled on node n1: it used more than its memory limit of 256Mi (resources.limits.memory)',
    });
    expect(w.exits.allCompleted(1)).toBe(false);
  });

  it("names an eviction with Kubernetes' message", async () => {
    const clock = new FakeBackendClock();
    const w = await watched(clock);
    const evicted = endedStatus({ exitCode: 137 });
    evicted!.conditions = [
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'TerminationByKubelet',
        message: 'The node was low on resource: memory.',
      },
    ];
    w.run.emit(runnerPodObject(0, evicted));
    await settle();
    expect(w.exit()).toEqual({
      code: 137,
      reason: 'runner 0 was evicted on node n1: The node was low on resource: memory.',
    });
  });

  it('fails a runner whose image cannot be pulled, naming the Pod and the reason', async () => {
    const clock = new FakeBackendClock();
    const pulling = runnerPodObject(0, {
      phase: 'Pending',
      containerStatuses: [
        {
          name: 'k6',
          image: 'k6',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ErrImagePull', message: 'pull access denied for nope/k6' } },
        },
      ],
    });
    const w = await watched(clock, pulling);
    expect(w.exit()).toEqual({
      code: null,
      reason: 'Pod k6d-r1-0: ErrImagePull: pull access denied for nope/k6',
    });
  });

  it('fails a Pod Unschedulable for the whole schedule timeout, and not one that got placed meanwhile', async () => {
    const unschedulable = runnerPodObject(0, {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: "0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector.",
        },
      ],
    });
    const clock = new FakeBackendClock();
    const w = await watched(clock, unschedulable);
    await clock.advance(59_000);
    expect(w.exit()).toBeUndefined();
    // Without any Pod event: the periodic check sees the timeout pass.
    await clock.advance(CHECK_EVERY_MS);
    expect(w.exit()).toEqual({
      code: null,
      reason:
        "Pod k6d-r1-0 could not be placed within 60 s: 0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector.",
    });
    expect(clock.pending).toBe(0);

    // Placed after 40 s, then Unschedulable again (say, preempted and recreated): the timeout starts over.
    const clock2 = new FakeBackendClock();
    const w2 = await watched(clock2, unschedulable);
    await clock2.advance(40_000);
    w2.run.emit(runnerPodObject(0, { phase: 'Pending' }));
    await clock2.advance(1_000);
    w2.run.emit(unschedulable);
    await clock2.advance(50_000);
    expect(w2.exit()).toBeUndefined();
    await clock2.advance(10_000);
    expect(w2.exit()?.reason).toMatch(/^Pod k6d-r1-0 could not be placed within 60 s/);
  });

  it("names the scheduler's reason as soon as a runner is Unschedulable, once per distinct reason", async () => {
    const unschedulable = (index: number, message: string) =>
      runnerPodObject(index, {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
      });
    const antiAffinity = "0/8 nodes are available: 8 node(s) didn't match pod anti-affinity rules.";
    const clock = new FakeBackendClock();
    const run = await new FakeRunPods(clock, [
      unschedulable(0, antiAffinity),
      unschedulable(1, antiAffinity),
    ]).start();
    const warnings: string[] = [];
    const exits = new RunnerExits(run.pods, { scheduleTimeoutS: 120 }, clock, {
      warning: (m) => warnings.push(m),
    });
    const hooks = { onState: () => {}, onLost: () => {} };
    void exits.watch(0, hooks);
    void exits.watch(1, hooks);
    await settle();
    expect(warnings).toEqual([
      `runner 0 cannot be placed yet (Pod k6d-r1-0 is Unschedulable): ${antiAffinity} The run fails if it stays so for 120 s (schedule timeout).`,
    ]);
    await clock.advance(30_000);
    run.emit(unschedulable(1, '0/8 nodes are available: 8 Insufficient cpu.'));
    await clock.advance(30_000);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(
      /^runner 1 cannot be placed yet \(Pod k6d-r1-1 is Unschedulable\): 0\/8 nodes are available: 8 Insufficient cpu\./,
    );
  });

  it('takes a runner for lost when its node never reports the end of a taken-away Pod', async () => {
    const clock = new FakeBackendClock();
    const w = await watched(clock);
    // The taint manager deletes the Pod of a node gone NotReady: its grace period ends in 30 s.
    const deletedAt = new Date(clock.now() + 30_000);
    const taken = runnerPodObject(0, {
      ...RUNNING_STATUS,
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }],
    });
    taken.metadata!.deletionTimestamp = deletedAt;
    w.run.emit(taken);
    await clock.advance(30_000 + LOST_AFTER_MS - CHECK_EVERY_MS);
    expect(w.exit()).toBeUndefined();
    expect(w.lostCalls()).toBe(0);
    await clock.advance(CHECK_EVERY_MS);
    expect(w.exit()).toEqual({
      code: null,
      reason:
        'runner 0 was lost on node n1: its Pod was evicted (DeletionByTaintManager) but the node never reported the end of its container; the node is NotReady or unreachable (kubelet stopped)',
    });
    // Its k6 is asked to stop once (it may still run), and its log is not read from the gone node.
    expect(w.lostCalls()).toBe(1);
    expect(w.exits.isLost(0)).toBe(true);
  });

  it('does not take a disrupted runner for lost when its node reports the end in time', async () => {
    const clock = new FakeBackendClock();
    const w = await watched(clock);
    const evicted = runnerPodObject(0, {
      ...RUNNING_STATUS,
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }],
    });
    w.run.emit(evicted);
    // No deletionTimestamp: the Pod's own grace period (30 s by default) from when it was seen.
    await clock.advance(35_000);
    expect(w.exit()).toBeUndefined();
    const ended = endedStatus({ exitCode: 105 });
    ended!.conditions = evicted.status!.conditions;
    w.run.emit(runnerPodObject(0, ended));
    await settle();
    expect(w.exit()).toEqual({ code: 105, reason: 'runner 0 was evicted on node n1' });
    expect(w.exits.isLost(0)).toBe(false);
  });

  it('counts a Pod someone else deleted as a failure, not as a completed run', async () => {
    const clock = new FakeBackendClock();
    const w = await watched(clock);
    w.run.emit(runnerPodObject(0, RUNNING_STATUS), 'DELETED');
    await settle();
    expect(w.exit()).toEqual({ code: null, reason: 'Pod k6d-r1-0: its Pod was deleted' });
  });
});
