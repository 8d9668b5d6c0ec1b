import type { Clock } from '../../clock.ts';
import { K6_STATUS, type K6Status, type RunnerApi, type RunnerRequest, runnerApi } from '../../k6/rest.ts';
import type { BarrierFollows } from './barrier/follow.ts';
import type { PodState } from './pods.ts';

/**
 * The status of a runner whose test runs, as its barrier container's log tells it: no VU count
 * (NaN), which the monitor takes from the runners' records instead (Runner.vusRecord).
 */
const RUNNING: K6Status = {
  status: K6_STATUS.Running,
  paused: false,
  running: true,
  stopped: false,
  vus: Number.NaN,
  vusMax: Number.NaN,
  tainted: false,
};

/** A status the orchestrator's barrier reads as "not yet" (k6 is still initialising VUs). */
const INITIALISING: K6Status = {
  status: K6_STATUS.InitVUs,
  paused: true,
  running: false,
  stopped: false,
  vus: 0,
  vusMax: 0,
  tainted: false,
};

/** What {@link RunnerApis} needs. */
export interface RunnerApisOptions {
  /** The runners' Pod states (pods.ts `RunnerPods.state`). */
  state(index: number): PodState;
  barriers: Pick<BarrierFollows, 'get' | 'gate' | 'allDone'>;
  /** A request to a runner's k6 REST API through the pod proxy (pod-proxy.ts). */
  proxy(index: number): RunnerRequest;
  /** How many runners the run has. */
  runnerCount(): number;
  clock: Pick<Clock, 'now'>;
  /** Called once per runner when it is asked to start, with how long until its start, in ms. */
  onStart(index: number, startsInMs: number): void;
}

/**
 * The runners' REST APIs (Runner.api), whose status comes from the barrier containers' logs where
 * they can be followed and the rest through the pod proxy. Before the start, a runner is
 * "initialising" until every runner is ready, then one real `GET /v1/status` per runner, all at
 * once, through the pod proxy confirms it and opens the warm connection its start `PATCH` goes out
 * on; after the start, "running" until the end line. A runner whose barrier container failed, or
 * whose log cannot be followed, is polled through the proxy instead. Owns which runners were asked
 * to start and the slowest confirmation's round trip.
 */
export class RunnerApis {
  private readonly started = new Set<number>();
  private slowestMs = 0;
  private readonly o: RunnerApisOptions;

  constructor(options: RunnerApisOptions) {
    this.o = options;
  }

  /** The slowest round trip of the runners' confirmations through the pod proxy just before the start, in ms. */
  get slowestConfirmMs(): number {
    return this.slowestMs;
  }

  /**
   * Marks runner `index` as started (once): its status comes from its barrier log from now on.
   * @param startsInMs how long until its start, in ms (a scheduled start's lead).
   */
  markStarted(index: number, startsInMs = 0): void {
    if (this.started.has(index)) return;
    this.started.add(index);
    this.o.onStart(index, startsInMs);
  }

  /** Runner `index`'s REST API (see the class). */
  api(index: number): RunnerApi {
    const { barriers, clock } = this.o;
    const proxied = runnerApi(this.o.proxy(index));
    let confirmed: K6Status | undefined;
    return {
      ...proxied,
      start: async () => {
        this.markStarted(index);
        return proxied.start();
      },
      status: async (timeoutMs) => {
        const follow = barriers.get(index);
        const end = follow?.log.end;
        if (this.started.has(index)) {
          if (end)
            return {
              ...RUNNING,
              status: end.status,
              running: false,
              vus: 0,
              stopped: end.status === K6_STATUS.Interrupted,
            };
          const state = this.o.state(index);
          if (follow && !follow.failed && state.kind === 'running' && state.barrier === 'running')
            return RUNNING;
          return proxied.status(timeoutMs);
        }
        const state = this.o.state(index);
        if (state.kind !== 'running') throw new Error(`runner ${index} has no running Pod (${state.kind})`);
        const gate = barriers.gate(index);
        // Until every runner is ready (or failed), none is confirmed: then the orchestrator's next
        // poll sends all confirmations at once, which opens one warm connection per runner for the
        // start requests (sequential confirmations would leave a few sockets for all), and times
        // their way through the API server for a scheduled start's lead.
        if (gate === 'waiting' || (gate === 'ready' && !barriers.allDone(this.o.runnerCount())))
          return INITIALISING;
        if (confirmed && gate === 'ready') return confirmed;
        const sentAt = clock.now();
        const status = await proxied.status(timeoutMs);
        if (status.status === K6_STATUS.PausedBeforeRun && gate === 'ready') {
          confirmed = status;
          this.slowestMs = Math.max(this.slowestMs, clock.now() - sentAt);
        }
        return status;
      },
    };
  }
}
