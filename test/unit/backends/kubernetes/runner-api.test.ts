import { describe, expect, it } from 'vitest';
import type { BarrierFollow } from '../../../../src/backends/kubernetes/barrier/follow.ts';
import { BarrierLog } from '../../../../src/backends/kubernetes/barrier/log.ts';
import type { PodState } from '../../../../src/backends/kubernetes/pods.ts';
import { RunnerApis } from '../../../../src/backends/kubernetes/runner-api.ts';
import { K6_STATUS } from '../../../../src/k6/rest.ts';

/** Two runners whose barriers are as `gates` say; the proxy answers status 4 after `rttMs[i]` ms. */
function setup(gates: Array<'waiting' | 'ready' | 'failed'>, rttMs: number[] = gates.map(() => 100)) {
  let now = 0;
  const requests: string[] = [];
  const started: Array<[number, number]> = [];
  const states: PodState[] = gates.map((_, i) => ({ kind: 'running', pod: `p${i}`, barrier: 'running' }));
  const follows = gates.map((): BarrierFollow => ({ log: new BarrierLog(), failed: false }));
  const apis = new RunnerApis({
    state: (i) => states[i]!,
    barriers: {
      get: (i) => follows[i],
      gate: (i) => gates[i]!,
      allDone: (count) => gates.slice(0, count).every((g) => g !== 'waiting'),
    },
    proxy: (i) => async (method, path) => {
      requests.push(`${i} ${method} ${path}`);
      now += rttMs[i]!;
      return { data: { attributes: { status: K6_STATUS.PausedBeforeRun, paused: true, vus: 2 } } };
    },
    runnerCount: () => gates.length,
    clock: { now: () => now },
    onStart: (i, inMs) => started.push([i, inMs]),
  });
  return { apis, requests, started, states, follows, gates };
}

describe("a Kubernetes runner's REST API", () => {
  it('answers "initialising" until every barrier is done, then confirms each runner once through the pod proxy, timing the slowest', async () => {
    const s = setup(['ready', 'waiting'], [120, 310]);
    const [a, b] = [s.apis.api(0), s.apis.api(1)];
    expect((await a.status()).status).toBe(K6_STATUS.InitVUs);
    expect((await b.status()).status).toBe(K6_STATUS.InitVUs);
    expect(s.requests).toEqual([]);
    s.gates[1] = 'ready';
    expect((await a.status()).status).toBe(K6_STATUS.PausedBeforeRun);
    expect((await b.status()).status).toBe(K6_STATUS.PausedBeforeRun);
    // Confirmed: the next polls cost the API server nothing.
    await a.status();
    await b.status();
    expect(s.requests).toEqual(['0 GET /v1/status', '1 GET /v1/status']);
    expect(s.apis.slowestConfirmMs).toBe(310);
  });

  it('polls a runner whose barrier failed through the pod proxy every time, without timing it', async () => {
    const s = setup(['failed', 'ready']);
    const api = s.apis.api(0);
    await api.status();
    await api.status();
    expect(s.requests).toEqual(['0 GET /v1/status', '0 GET /v1/status']);
    expect(s.apis.slowestConfirmMs).toBe(0);
  });

  it('says "running" from the barrier log after the start, and the end status from its end line', async () => {
    const s = setup(['ready']);
    const api = s.apis.api(0);
    await api.start();
    await api.start();
    // Its k6 log is followed from shortly after its start, once.
    expect(s.started).toEqual([[0, 0]]);
    expect(s.requests).toEqual(['0 PATCH /v1/status', '0 PATCH /v1/status']);
    const running = await api.status();
    expect(running).toMatchObject({ status: K6_STATUS.Running, running: true });
    expect(running.vus).toBeNaN();
    s.follows[0]!.log.feed('k6d-end 5000 10\n');
    expect(await api.status()).toMatchObject({ status: 10, running: false, stopped: true, vus: 0 });
    expect(s.requests).toHaveLength(2);
  });

  it('polls a started runner through the pod proxy once its barrier log is no longer followed', async () => {
    const s = setup(['ready']);
    s.apis.markStarted(0, 350);
    expect(s.started).toEqual([[0, 350]]);
    s.follows[0]!.failed = true;
    await s.apis.api(0).status();
    expect(s.requests).toEqual(['0 GET /v1/status']);
  });

  it('refuses a status before the start when the runner has no running Pod', async () => {
    const s = setup(['waiting']);
    s.states[0] = { kind: 'pending', pod: 'p0' };
    await expect(s.apis.api(0).status()).rejects.toThrow('runner 0 has no running Pod (pending)');
  });
});
