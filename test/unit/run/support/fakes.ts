import type { Backend, Runner } from '../../../../src/backends/backend.ts';
import type { Clock } from '../../../../src/clock.ts';
import { K6_STATUS, type K6LiveMetric, type K6Status } from '../../../../src/k6/rest.ts';
import { parseThresholds } from '../../../../src/k6/thresholds-parser.ts';
import type { Logger } from '../../../../src/log.ts';
import type { RunnerExit, RunPlan } from '../../../../src/plan.ts';
import { type RunOptions, runDistributed } from '../../../../src/run/index.ts';
import { planRun } from '../../../../src/run/plan.ts';
import type { Preflight } from '../../../../src/run/preflight.ts';

/*
 * Fakes for unit tests of the orchestration. A fake backend stands in for k6 processes and Pods
 * (the end-to-end tests run the real ones); its runners answer a scripted k6 REST API and exit
 * when the script says so. The fake clock lets timeouts of minutes pass in milliseconds.
 */

/**
 * A clock whose time moves only when someone sleeps. Pending sleeps wake one per macrotask in the
 * order of their wake times (ties in call order), each moving the time to its wake time; so a
 * runner that exits after 25 s and a monitor ticking every second interleave as on a real clock,
 * and timeouts of minutes pass in milliseconds. A run still sleeping after
 * {@link FakeClock.LIMIT_MS} of its time is a run that never ends: the sleep rejects, so the test
 * fails at once instead of hanging.
 */
export class FakeClock implements Clock {
  static readonly LIMIT_MS = 6 * 3600_000;
  private readonly begin = Date.parse('2026-01-01T00:00:00.000Z');
  private t = this.begin;
  private readonly timers: Array<{
    wake: number;
    seq: number;
    resolve: () => void;
    reject: (e: Error) => void;
  }> = [];
  private seq = 0;
  private pumping = false;
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.timers.push({ wake: this.t + Math.max(0, ms), seq: this.seq++, resolve, reject });
      this.pump();
    });
  }
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    setImmediate(() => {
      this.pumping = false;
      this.timers.sort((a, b) => a.wake - b.wake || a.seq - b.seq);
      const timer = this.timers.shift();
      if (!timer) return;
      this.t = Math.max(this.t, timer.wake);
      if (this.t - this.begin > FakeClock.LIMIT_MS)
        timer.reject(new Error('the fake clock passed 6 h: the run never ends'));
      else timer.resolve();
      if (this.timers.length > 0) this.pump();
    });
  }
}

/** A k6 summary export with `requests` HTTP requests over `durationS` seconds. */
export function summaryJson(requests = 100, durationS = 10): string {
  return JSON.stringify({
    metrics: {
      http_reqs: { count: requests, rate: requests / durationS },
      iterations: { count: requests, rate: requests / durationS },
    },
    root_group: { name: '', path: '', groups: {}, checks: {} },
  });
}

/** How one fake runner behaves. */
export interface FakeRunnerScript {
  /** What `GET /v1/status` answers before the start, in turn (the last one repeats); `error` throws. Default `[4]`. */
  statuses?: Array<number | 'error'>;
  /** Called when it first answers status 4 (PausedBeforeRun) to the barrier: a test interrupts there. */
  onReady?: () => void;
  /** Exits right after launch, before the start, with this exit and log. */
  exitBeforeStart?: RunnerExit & { logTail?: string };
  /**
   * After the start: its test ends once `afterMs` of the clock passed (a completed run by default:
   * exit 0 at once), or `hang` until stopped or killed. As k6 with `--linger`, it then lingers at
   * status 9 (Ended; 10 Interrupted for 103/105/108, 11 MarkedAsFailed for 110) until terminated,
   * and exits with `code` then; `crash` exits at once instead (a crash, an OOM kill).
   */
  run?: (RunnerExit & { afterMs?: number; logTail?: string; crash?: true; endStatus?: number }) | 'hang';
  /**
   * What a REST stop does: end the test (status 10, exit 103 once terminated; default), nothing, or
   * `refuse` (the call fails, as with a runner that is ending; its test ends with 0 just after).
   */
  onStop?: 'exit' | 'ignore' | 'refuse';
  /** The summary export it leaves; default {@link summaryJson}(); `null` for none. */
  summary?: string | null;
  /** Why its log could not be read (with `summary: null`), as a backend says it. */
  unreadable?: string;
  /**
   * What `GET /v1/metrics` answers, given the clock's ms since its start: metrics, or `hang` for a
   * request that never settles (a SIGSTOPped k6 over a transport without a timeout). Default `[]`.
   */
  metrics?: (elapsedMs: number) => K6LiveMetric[] | 'hang';
  /** Active VUs it reports on `GET /v1/status` while its test runs. Default 1. */
  vus?: number;
  /** What `POST /v1/setup` does: answer this data (default `{data: {token: 'abc'}}`), or throw this error. */
  setup?: { data: unknown } | undefined | Error;
  /**
   * Keeps its own record of its VUs, as a Kubernetes runner's barrier container does: its status
   * after the start carries no VU count (NaN), `testEnded` settles as its test ends, and
   * `vusRecord()` gives these changes (epoch ms of the fake clock, VUs) once it has ended.
   */
  ownRecord?: Array<[number, number]>;
  /** What `POST /v1/teardown` does: nothing (default), or throw this error. */
  teardown?: Error;
}

/** A fake runner with what the orchestration did to it. */
export interface FakeRunner extends Runner {
  calls: {
    start: number;
    stop: number;
    kill: number;
    terminate: number;
    metrics: number;
    setup: number;
    teardown: number;
    /** The setup data each `PUT /v1/setup` gave it. */
    setSetupData: unknown[];
  };
  /** Ends the runner as the backend's cleanup would (SIGTERM), if it still runs. */
  cleanupTerminate(): void;
}

/** What `GET /v1/status` answers at status `code`, with `vus` active while the test runs. */
export function status(code: number, vus = 1): K6Status {
  return {
    status: code,
    paused: code <= 4,
    running: code > 4 && code < 9,
    stopped: code === K6_STATUS.Interrupted,
    vus: code >= 5 && code < 9 ? vus : 0,
    vusMax: 1,
    tainted: false,
  };
}

/** The status k6 lingers at after its test ended with `code`. */
function endStatus(code: number | null): number {
  if (code === 110) return K6_STATUS.MarkedAsFailed;
  if (code === 103 || code === 105 || code === 108) return K6_STATUS.Interrupted;
  return K6_STATUS.Ended;
}

function fakeRunner(index: number, script: FakeRunnerScript, clock: Clock): FakeRunner {
  let settle!: (exit: RunnerExit) => void;
  let ended: RunnerExit | undefined;
  let logTail = '';
  const exited = new Promise<RunnerExit>((resolve) => {
    settle = resolve;
  });
  const exit = (e: RunnerExit & { logTail?: string }) => {
    if (ended) return;
    const { logTail: tail, ...rest } = e;
    ended = rest;
    logTail = tail ?? logTail;
    settle(rest);
  };
  /** Set once its test ended: the exit it lingers with. */
  let lingering: (RunnerExit & { logTail?: string; endStatus?: number }) | undefined;
  let started = false;
  let testEnded!: (status: number) => void;
  const ownEnd = new Promise<number>((resolve) => {
    testEnded = resolve;
  });
  const endTest = (e: RunnerExit & { logTail?: string; crash?: true; endStatus?: number }) => {
    if (ended || lingering) return;
    if (e.crash) {
      const { crash: _, ...rest } = e;
      exit(rest);
    } else {
      lingering = e;
      testEndedAtMs = clock.now();
      testEnded(e.endStatus ?? endStatus(e.code));
    }
  };
  const calls = {
    start: 0,
    stop: 0,
    kill: 0,
    terminate: 0,
    metrics: 0,
    setup: 0,
    teardown: 0,
    setSetupData: [] as unknown[],
  };
  let startedAtMs = clock.now();
  let testEndedAtMs: number | undefined;
  const statuses = script.statuses ?? [K6_STATUS.PausedBeforeRun];
  let polls = 0;
  let readySeen = false;
  if (script.exitBeforeStart) setImmediate(() => exit(script.exitBeforeStart!));
  return {
    index,
    calls,
    exited,
    api: {
      status: async () => {
        if (ended) throw new Error('connect ECONNREFUSED 127.0.0.1:6565');
        if (lingering) return status(lingering.endStatus ?? endStatus(lingering.code));
        if (started) return status(K6_STATUS.Running, script.ownRecord ? Number.NaN : script.vus);
        const answer = statuses[Math.min(polls++, statuses.length - 1)]!;
        if (answer === 'error') throw new Error('connect ECONNREFUSED 127.0.0.1:6565');
        if (answer === K6_STATUS.PausedBeforeRun && !readySeen) {
          readySeen = true;
          script.onReady?.();
        }
        return status(answer);
      },
      start: async () => {
        calls.start++;
        started = true;
        startedAtMs = clock.now();
        const run = script.run ?? { code: 0 };
        if (run !== 'hang') {
          void clock.sleep(run.afterMs ?? 0).then(() => endTest(run));
        }
        return status(K6_STATUS.Running, script.vus);
      },
      stop: async () => {
        calls.stop++;
        if (script.onStop === 'refuse') {
          setTimeout(() => endTest({ code: 0 }), 20);
          throw new Error('socket hang up');
        }
        if ((script.onStop ?? 'exit') === 'exit') setImmediate(() => endTest({ code: 103 }));
      },
      metrics: () => {
        calls.metrics++;
        // A lingering k6 answers with its final counts.
        const answer = script.metrics?.((testEndedAtMs ?? clock.now()) - startedAtMs) ?? [];
        return answer === 'hang' ? new Promise<never>(() => {}) : Promise.resolve(answer);
      },
      setup: async () => {
        calls.setup++;
        if (script.setup instanceof Error) throw script.setup;
        return 'setup' in script ? script.setup : { data: { token: 'abc' } };
      },
      setSetupData: async (data) => {
        calls.setSetupData.push(data);
      },
      teardown: async () => {
        calls.teardown++;
        if (script.teardown) throw script.teardown;
      },
    },
    terminate: async () => {
      calls.terminate++;
      if (lingering) {
        const { endStatus: _, ...rest } = lingering;
        setImmediate(() => exit(rest));
      } else setImmediate(() => exit({ code: 105 }));
    },
    cleanupTerminate: () => exit({ code: null, signal: 'SIGTERM' }),
    ...(script.ownRecord
      ? {
          testEnded: ownEnd,
          vusRecord: () =>
            testEndedAtMs === undefined
              ? undefined
              : {
                  changes: script.ownRecord!.map(([offsetMs, vus]) => ({
                    atMs: startedAtMs + offsetMs,
                    vus,
                  })),
                  endedAtMs: testEndedAtMs,
                  periodMs: 500,
                },
        }
      : {}),
    kill: async () => {
      calls.kill++;
      exit({ code: null, signal: 'SIGKILL' });
      await exited;
    },
    collect: async () => {
      const summary = script.summary === undefined ? summaryJson() : script.summary;
      if (summary === null && script.unreadable) return { logTail, unreadable: script.unreadable };
      // A killed k6 writes no summary.
      return summary === null || !ended || ended.signal === 'SIGKILL' ? { logTail } : { summary, logTail };
    },
  };
}

/** A backend of fake runners, one per script; records its cleanups. */
export class FakeBackend implements Backend {
  readonly name = 'local' as const;
  runners: FakeRunner[] = [];
  cleanups = 0;
  private readonly scripts: FakeRunnerScript[];
  private readonly clock: Clock;
  constructor(scripts: FakeRunnerScript[], clock: Clock) {
    this.scripts = scripts;
    this.clock = clock;
  }
  async launch(): Promise<Runner[]> {
    this.runners = this.scripts.map((s, i) => fakeRunner(i, s, this.clock));
    return this.runners;
  }
  async cleanup(): Promise<void> {
    this.cleanups++;
    for (const r of this.runners) r.cleanupTerminate();
  }
}

/** A logger that keeps every line, prefixed with its level. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info: ${m}`),
    warning: (m) => lines.push(`warning: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
    debug: () => {},
  };
}

/** What preflight would have learnt of a test of `totalDurationS` with these thresholds. */
export function fakePreflight(totalDurationS = 10, thresholds: Record<string, string[]> = {}): Preflight {
  return {
    archivePath: '/nonexistent/archive.tar',
    k6Version: 'v2.2.0',
    scriptHash: 'abc',
    thresholds: parseThresholds(thresholds),
    maxVUs: 4,
    totalDurationS,
    tags: {},
    runArgs: [],
    env: {},
    noThresholds: false,
    warnings: [],
    declaredContains: {},
    reads: { vu: false, vuIterations: false, iterationInTest: false, instance: false },
    options: {},
  };
}

/** A plan for `n` runners. */
export function fakePlan(n: number): RunPlan {
  return planRun({ runners: n, maxVUs: 4, extraPercentiles: [], userRunArgs: [], tags: {} });
}

/**
 * Runs a distributed test of fake runners (one per script) on a fake clock; `options` override the
 * run's defaults (a 10 s test without thresholds).
 */
export function runFake(scripts: FakeRunnerScript[], options: Partial<RunOptions> = {}) {
  const clock = new FakeClock();
  const backend = new FakeBackend(scripts, clock);
  const log = recordingLogger();
  const run = runDistributed({
    script: 'load.js',
    preflight: fakePreflight(),
    plan: fakePlan(scripts.length),
    backend,
    log,
    clock,
    ...options,
  });
  return { backend, log, run, clock };
}
