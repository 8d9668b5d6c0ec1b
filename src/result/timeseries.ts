import type { CheckTotals, K6LiveMetric } from '../k6/rest.ts';
import { TIMELINE_SCHEMA, type Timeline, type TimelinePoint } from './timeline-schema.ts';

export { type CheckTotals, checkTotalsFromGroups } from '../k6/rest.ts';

/** What one runner answered at one poll. */
export interface RunnerPoll {
  /** 0-based runner index. */
  runner: number;
  /** Its `GET /v1/metrics` answer (see `parseMetrics`); absent or empty when it did not answer: it keeps its last counts. */
  metrics?: K6LiveMetric[];
  /** Its check totals (from `GET /v1/groups`, see `checkTotalsFromGroups` in k6/rest.ts), when read. */
  checks?: CheckTotals;
  /** `true` once the runner has ended: it keeps its last counts and its VUs count as 0. */
  ended?: boolean;
}

/** Options of {@link TimelineRecorder}. */
export interface TimelineOptions {
  /** The recording interval, s (e.g. 5). @throws RangeError when not a positive number. */
  intervalS: number;
  /** Epoch ms of the synchronised start (the series' time 0). */
  startedAtMs: number;
}

/** Cumulative values of one runner since the start, as last read. */
interface RunnerState {
  requests: number;
  failedRequests: number;
  /** Sum of `http_req_duration` values, ms (avg × count). */
  durationSumMs: number;
  p95Ms?: number;
  vus: number;
  checks?: CheckTotals;
  ended: boolean;
  /** Read at the current interval. */
  fresh: boolean;
}

interface Totals {
  requests: number;
  failedRequests: number;
  durationSumMs: number;
  checksFailed?: number;
}

/**
 * A point is due this share of an interval before its slot on the grid (polls jitter), but never
 * more than {@link EARLY_MAX_MS} early: polls also come on the finer grid of the timeline, and one a
 * second before a 10 s line's slot must not close it.
 */
const EARLY_SHARE = 0.1;
const EARLY_MAX_MS = 400;

/**
 * Builds the {@link Timeline} from per-runner polls: pure, no clock and no I/O (the caller gives the
 * poll time). Call {@link record} at every poll (any rate): a point is made at the first poll that
 * reaches the next slot of the grid `startedAtMs + k × intervalS` (up to 10% of an interval, at most
 * 400 ms, early, for polls that jitter), so points do not drift; each point carries the length it really covers.
 * Call {@link finish} once after the last runner ended: it closes the last, possibly shorter, interval.
 */
export class TimelineRecorder {
  readonly #intervalMs: number;
  readonly #startedAtMs: number;
  readonly #runners = new Map<number, RunnerState>();
  readonly #points: TimelinePoint[] = [];
  #lastAtMs: number;
  /** Grid slot of the last point (0 = the start). */
  #slot = 0;
  #last: Totals = { requests: 0, failedRequests: 0, durationSumMs: 0, checksFailed: 0 };

  constructor(options: TimelineOptions) {
    if (!(options.intervalS > 0) || !Number.isFinite(options.intervalS))
      throw new RangeError(
        `timeline interval must be a positive number of seconds, got ${options.intervalS}`,
      );
    this.#intervalMs = options.intervalS * 1000;
    this.#startedAtMs = options.startedAtMs;
    this.#lastAtMs = options.startedAtMs;
  }

  /**
   * Takes one poll of some or all runners at `atMs` (epoch ms); runners not listed keep their last
   * values. Returns the point made by this poll, if one was due.
   */
  record(atMs: number, polls: RunnerPoll[]): TimelinePoint | undefined {
    for (const poll of polls) this.#update(poll);
    const due =
      this.#startedAtMs +
      (this.#slot + 1) * this.#intervalMs -
      Math.min(EARLY_SHARE * this.#intervalMs, EARLY_MAX_MS);
    if (atMs < due) return undefined;
    this.#slot = Math.max(this.#slot + 1, Math.round((atMs - this.#startedAtMs) / this.#intervalMs));
    return this.#point(atMs);
  }

  /**
   * Takes the last poll (if any), closes the last interval and returns the series.
   * The last requests of a runner reach its `/v1/metrics` a moment after it reports Ended, and a
   * runner that exited cannot be polled: to make the series add up to the result's totals, pass
   * each runner's end-of-test summary here, in the same shape (`http_reqs.count`,
   * `http_req_failed.passes`, `http_req_duration.avg`/`p(95)`, `checks.passes`/`fails`).
   */
  finish(atMs: number, polls: RunnerPoll[] = []): Timeline {
    for (const poll of polls) this.#update(poll);
    if (atMs > this.#lastAtMs) this.#point(atMs);
    return this.series();
  }

  /** The series so far (a copy). */
  series(): Timeline {
    return {
      schema: TIMELINE_SCHEMA,
      intervalS: this.#intervalMs / 1000,
      latencyMetric: 'http_req_duration',
      p95Scope: 'since-start',
      points: this.#points.map((p) => ({ ...p })),
    };
  }

  #update(poll: RunnerPoll): void {
    const state: RunnerState = this.#runners.get(poll.runner) ?? {
      requests: 0,
      failedRequests: 0,
      durationSumMs: 0,
      vus: 0,
      ended: false,
      fresh: false,
    };
    this.#runners.set(poll.runner, state);
    if (poll.ended) state.ended = true;
    if (poll.checks) state.checks = { ...poll.checks };
    const metrics = poll.metrics ?? [];
    if (metrics.length === 0) return;
    state.fresh = true;
    const sample = (name: string) => metrics.find((m) => m.name === name)?.sample;
    const requests = Math.round(sample('http_reqs')?.count ?? 0);
    // Cumulative counts only grow; a smaller reading (a runner answering late) is ignored.
    if (requests < state.requests) return;
    state.requests = requests;
    const failed = sample('http_req_failed');
    state.failedRequests =
      failed?.passes !== undefined ? failed.passes : Math.round((failed?.rate ?? 0) * requests);
    const duration = sample('http_req_duration');
    state.durationSumMs = (duration?.avg ?? 0) * requests;
    state.p95Ms = requests > 0 ? duration?.['p(95)'] : undefined;
    state.vus = Math.round(sample('vus')?.value ?? 0);
    const checks = sample('checks');
    if (!poll.checks && checks?.passes !== undefined && checks.fails !== undefined)
      state.checks = { passes: checks.passes, fails: checks.fails };
  }

  #point(atMs: number): TimelinePoint {
    const states = [...this.#runners.values()];
    const sum = (f: (s: RunnerState) => number) => states.reduce((a, s) => a + f(s), 0);
    const withChecks = states.filter((s) => s.checks);
    const totals: Totals = {
      requests: sum((s) => s.requests),
      failedRequests: sum((s) => s.failedRequests),
      durationSumMs: sum((s) => s.durationSumMs),
      checksFailed: withChecks.length > 0 ? sum((s) => s.checks?.fails ?? 0) : undefined,
    };
    const intervalS = (atMs - this.#lastAtMs) / 1000;
    const requests = Math.max(0, totals.requests - this.#last.requests);
    const failed = Math.max(0, totals.failedRequests - this.#last.failedRequests);
    const p95s = states.flatMap((s) => (s.p95Ms === undefined ? [] : [s.p95Ms]));
    const point: TimelinePoint = {
      tS: round((atMs - this.#startedAtMs) / 1000, 3),
      intervalS: round(intervalS, 3),
      requests,
      rps: round(requests / intervalS, 3),
      vus: sum((s) => (s.ended ? 0 : s.vus)),
      errorRate: requests > 0 ? Math.min(1, failed / requests) : 0,
      runners: states.filter((s) => s.fresh).length,
    };
    if (totals.checksFailed !== undefined)
      point.checksFailed = Math.max(0, totals.checksFailed - (this.#last.checksFailed ?? 0));
    if (requests > 0)
      point.avgMs = round(Math.max(0, (totals.durationSumMs - this.#last.durationSumMs) / requests), 3);
    if (p95s.length > 0) {
      point.p95MinMs = round(Math.min(...p95s), 3);
      point.p95MaxMs = round(Math.max(...p95s), 3);
      if (p95s.length === 1) point.p95Ms = point.p95MinMs;
    }
    this.#points.push(point);
    this.#last = totals;
    this.#lastAtMs = atMs;
    for (const s of states) s.fresh = false;
    return point;
  }
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
