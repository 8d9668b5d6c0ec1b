import type { Backend, Runner, RunnerExit } from '../../../../src/backends/backend.ts';
import type { Preflight } from '../../../../src/k6/preflight.ts';
import { K6_STATUS, type K6Status } from '../../../../src/k6/rest.ts';
import { parseThresholds } from '../../../../src/k6/thresholds.ts';
import type { Logger } from '../../../../src/log.ts';
import type { Clock } from '../../../../src/run/clock.ts';
import { planRun, type RunPlan } from '../../../../src/run/plan.ts';

/*
 * Fakes for unit tests of the orchestration. A fake backend stands in for k6 processes and Pods
 * (the end-to-end tests run the real ones); its runners answer a scripted k6 REST API and exit
 * when the script says so. The fake clock lets timeouts of minutes pass in milliseconds.
 */

/**
 * A clock whose time moves only when someone sleeps: `sleep(ms)` wakes on the next macrotask at
 * now+ms. A run still sleeping after {@link FakeClock.LIMIT_MS} of its time is a run that never
 * ends: the sleep rejects, so the test fails at once instead of hanging.
 */
export class FakeClock implements Clock {
  static readonly LIMIT_MS = 6 * 3600_000;
  private readonly begin = Date.parse('2026-01-01T00:00:00.000Z');
  private t = this.begin;
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    const wake = this.t + ms;
    return new Promise((resolve, reject) =>
      setImmediate(() => {
        this.t = Math.max(this.t, wake);
        if (this.t - this.begin > FakeClock.LIMIT_MS)
          reject(new Error('the fake clock passed 6 h: the run never ends'));
        else resolve();
      }),
    );
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
  /** Exits right after launch, before the start, with this exit and log. */
  exitBeforeStart?: RunnerExit & { logTail?: string };
  /**
   * After the start: exit with this exit once `afterMs` of the clock passed (a completed run by
   * default: exit 0 at once), or `hang` until stopped or killed.
   */
  run?: (RunnerExit & { afterMs?: number; logTail?: string }) | 'hang';
  /** What a REST stop does: exit 103 (default), or nothing (the runner has to be killed). */
  onStop?: 'exit' | 'ignore';
  /** The summary export it leaves; default {@link summaryJson}(); `null` for none. */
  summary?: string | null;
}

/** A fake runner with what the orchestration did to it. */
export interface FakeRunner extends Runner {
  calls: { start: number; stop: number; kill: number };
  /** Ends the runner as the backend's cleanup would (SIGTERM), if it still runs. */
  terminate(): void;
}

function status(code: number): K6Status {
  return {
    status: code,
    paused: code <= 4,
    running: code > 4,
    stopped: false,
    vus: 1,
    vusMax: 1,
    tainted: false,
  };
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
  const calls = { start: 0, stop: 0, kill: 0 };
  const statuses = script.statuses ?? [K6_STATUS.PausedBeforeRun];
  let polls = 0;
  if (script.exitBeforeStart) setImmediate(() => exit(script.exitBeforeStart!));
  return {
    index,
    calls,
    exited,
    api: {
      status: async () => {
        const answer = statuses[Math.min(polls++, statuses.length - 1)]!;
        if (answer === 'error') throw new Error('connect ECONNREFUSED 127.0.0.1:6565');
        return status(answer);
      },
      start: async () => {
        calls.start++;
        const run = script.run ?? { code: 0 };
        if (run !== 'hang') {
          void clock.sleep(run.afterMs ?? 0).then(() => exit(run));
        }
        return status(K6_STATUS.Running);
      },
      stop: async () => {
        calls.stop++;
        if ((script.onStop ?? 'exit') === 'exit') setImmediate(() => exit({ code: 103 }));
      },
      metrics: async () => [],
    },
    terminate: () => exit({ code: null, signal: 'SIGTERM' }),
    kill: async () => {
      calls.kill++;
      exit({ code: null, signal: 'SIGKILL' });
      await exited;
    },
    collect: async () => {
      const summary = script.summary === undefined ? summaryJson() : script.summary;
      return summary === null || !ended ? { logTail } : { summary, logTail };
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
    for (const r of this.runners) r.terminate();
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
    noThresholds: false,
    warnings: [],
    declaredContains: {},
    reads: { vu: false, vuIterations: false },
    options: {},
  };
}

/** A plan for `n` runners. */
export function fakePlan(n: number): RunPlan {
  return planRun({ runners: n, maxVUs: 4, extraPercentiles: [], userRunArgs: [], tags: {} });
}
