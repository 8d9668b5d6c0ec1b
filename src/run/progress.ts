import type { Runner } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import { K6_METRIC } from '../k6/metrics.ts';
import type { CheckTotals, K6LiveMetric } from '../k6/rest.ts';
import type { RunnerSummary } from '../k6/summary.ts';
import type { Logger } from '../log.ts';
import { gridValueAt } from '../result/quantiles.ts';
import type { MetricContains } from '../result/schema.ts';
import type { Timeline, TimelinePoint } from '../result/timeline-schema.ts';
import { type RunnerPoll, TimelineRecorder } from '../result/timeseries.ts';

/** What one runner answered at one poll. */
export interface RunnerSnapshot {
  /** 0-based runner index. */
  runner: number;
  /** Epoch ms at which its answer arrived. */
  atMs: number;
  /** Its `GET /v1/metrics` answer. */
  metrics: K6LiveMetric[];
  /** Its check totals (`GET /v1/groups`), when the transport reads them and they answered. */
  checks?: CheckTotals;
}

/** One closed poll round: every runner that still ran was asked once. */
export interface PollRound {
  /** Epoch ms at which the round closed (every answer in, or the poll timeout passed). */
  atMs: number;
  /** The answers of this round, by runner index. */
  answered: ReadonlyMap<number, RunnerSnapshot>;
  /** Runners still running that did not answer this round (timed out, failed, or a request still pending). */
  silent: readonly number[];
  /** Runner indexes still running when the round closed. */
  running: ReadonlySet<number>;
  /** The latest answer of every runner that ever answered (a silent or ended runner keeps its last one). */
  latest: ReadonlyMap<number, RunnerSnapshot>;
}

/** Options of {@link Progress}. */
export interface ProgressOptions {
  /** Epoch ms of the synchronised start (time 0 of lines and of the timeline). */
  startedAtMs: number;
  /** Seconds between progress lines. */
  progressIntervalS: number;
  /** Seconds between points of the recorded timeline. Default {@link TIMELINE_INTERVAL_S}. */
  timelineIntervalS?: number;
  /**
   * How long a poll round waits for answers, in ms, before the runners that did not answer are
   * shown as such. Default 2000 (`REST_TIMEOUT_MS.poll`, after which the request itself gives up).
   */
  pollTimeoutMs?: number;
  /** Called with every closed round (the `vus` gauge, live threshold checks read it). */
  onPoll?: (round: PollRound) => void;
  clock: Clock;
  log: Logger;
}

/** Default seconds between points of the timeline kept in the result. */
export const TIMELINE_INTERVAL_S = 5;
const DEFAULT_POLL_TIMEOUT_MS = 2000;

/**
 * Progress stage (during the monitor). Polls every running runner's `/v1/metrics` (and
 * `/v1/groups` for check counts) at each slot of the line grid and of the timeline grid: each runner on
 * its own, never more than one request pending per runner, so a runner that hangs costs nothing but
 * its own line entry. A round closes when every runner answered or `pollTimeoutMs` passed; then:
 * - the timeline ({@link TimelineRecorder}) takes the answers;
 * - every `progressIntervalS`, one line: runners still running, active VUs (0 for a runner that
 *   ended), RPS and error rate over the interval since the last line, checks failed in it, the range
 *   of the runners' p95 since the start, and which runners did not answer;
 * - `onPoll` gets the round.
 * Nothing here is awaited by the monitor's loop ({@link tick} only starts a round), so neither the
 * deadline nor a runner's exit waits on a poll. After the test, {@link finish} takes the runners'
 * summaries (the exact final counts, which a runner that exited can no longer tell over REST), logs
 * the last line and returns the timeline. It also records what each metric contains (`time`,
 * `data`, `default`), which the summary export lacks.
 */
export class Progress {
  /** What each metric seen on `/v1/metrics` contains, by metric name (without tags). */
  readonly contains: Record<string, MetricContains> = {};
  /** The latest answer of every runner that answered at least once. */
  readonly latest = new Map<number, RunnerSnapshot>();
  readonly #runners: readonly Runner[];
  readonly #o: ProgressOptions;
  readonly #lineEveryMs: number;
  readonly #timelineEveryMs: number;
  readonly #pollTimeoutMs: number;
  readonly #timeline: TimelineRecorder;
  /** A recorder at the line interval: each of its points is one progress line. */
  readonly #lines: TimelineRecorder;
  /** Runners with a request still pending (not asked again until it settles). */
  readonly #pending = new Set<number>();
  #nextPollAtMs: number;
  #round: { startedAtMs: number; asked: Set<number>; answered: Map<number, RunnerSnapshot> } | undefined;
  #roundDone: Promise<void> = Promise.resolve();
  #closeRound: (() => void) | undefined;
  /** Answers that came after their round closed: they go into the next one. */
  #late: RunnerSnapshot[] = [];
  #running: ReadonlySet<number> = new Set();
  /** Runners whose test still runs (the others may linger, polled but shown as ended). */
  #testing: ReadonlySet<number> = new Set();
  /** Consecutive closed rounds in which no runner answered. */
  #emptyRounds = 0;
  /** Set by {@link close}: the test has ended, rounds still open record nothing. */
  #closed = false;

  constructor(runners: readonly Runner[], options: ProgressOptions) {
    this.#runners = runners;
    this.#o = options;
    const timelineIntervalS = options.timelineIntervalS ?? TIMELINE_INTERVAL_S;
    this.#lineEveryMs = options.progressIntervalS * 1000;
    this.#timelineEveryMs = timelineIntervalS * 1000;
    this.#pollTimeoutMs = Math.min(
      options.pollTimeoutMs ?? DEFAULT_POLL_TIMEOUT_MS,
      this.#lineEveryMs,
      this.#timelineEveryMs,
    );
    this.#timeline = new TimelineRecorder({ intervalS: timelineIntervalS, startedAtMs: options.startedAtMs });
    this.#lines = new TimelineRecorder({
      intervalS: options.progressIntervalS,
      startedAtMs: options.startedAtMs,
    });
    this.#nextPollAtMs = this.#nextSlot(options.startedAtMs);
  }

  /** The first moment after `atMs` on either grid (lines or timeline points), epoch ms. */
  #nextSlot(atMs: number): number {
    const since = atMs - this.#o.startedAtMs;
    const next = (every: number) => (Math.floor(since / every) + 1) * every;
    return this.#o.startedAtMs + Math.min(next(this.#lineEveryMs), next(this.#timelineEveryMs));
  }

  /**
   * Called by the monitor on every event with the runners still running (indexes: polled) and,
   * when some linger after their test ended, those whose test still runs (`testing`: counted in
   * `runners=` and their VUs; default all of `running`). Starts a poll round when one is due,
   * closes the open round when its timeout passed; never waits.
   */
  tick(running: ReadonlySet<number>, testing?: ReadonlySet<number>): void {
    this.#running = new Set(running);
    this.#testing = new Set(testing ?? running);
    const now = this.#o.clock.now();
    if (this.#closed) running = new Set();
    if (this.#round && now - this.#round.startedAtMs >= this.#pollTimeoutMs) this.#closeRound?.();
    if (this.#round || now < this.#nextPollAtMs || running.size === 0) return;
    this.#nextPollAtMs = this.#nextSlot(now);
    this.#startRound(now);
  }

  /**
   * The test has ended (every runner's test; they may still linger for teardown()): no more rounds,
   * and a round still open records no line or point, so that {@link finish}'s line, from the
   * summaries at the test's end, is the last.
   */
  close(): void {
    this.#closed = true;
  }

  /** Resolves once no poll round is open (at most `pollTimeoutMs` of the clock after the last tick). */
  async settled(): Promise<void> {
    while (this.#round) {
      const done = this.#roundDone;
      await Promise.race([done, this.#o.clock.sleep(this.#pollTimeoutMs).then(() => this.#closeRound?.())]);
    }
  }

  /**
   * Closes the series after the test: `summaries` (by runner index; undefined for a runner that left
   * none) give each runner's final counts. Logs the last line (every runner ended: VUs 0) and
   * returns the timeline for the result.
   * @param endedAtMs epoch ms at which the last runner ended.
   */
  finish(endedAtMs: number, summaries: ReadonlyArray<RunnerSummary | undefined>): Timeline {
    const polls = this.#runners.map(
      (r): RunnerPoll => ({ runner: r.index, ended: true, ...summaryPoll(summaries[r.index]) }),
    );
    const before = this.#lines.series().points.length;
    const lines = this.#lines.finish(endedAtMs, polls).points;
    if (lines.length > before) this.#logLine(lines.at(-1)!, [], 0, true);
    return this.#timeline.finish(endedAtMs, polls);
  }

  #startRound(now: number): void {
    const asked = new Set<number>();
    const answered = new Map<number, RunnerSnapshot>();
    this.#round = { startedAtMs: now, asked, answered };
    let close!: () => void;
    this.#roundDone = new Promise<void>((resolve) => {
      close = resolve;
    });
    let open = 0;
    const round = this.#round;
    this.#closeRound = () => {
      if (this.#round !== round) return;
      this.#round = undefined;
      this.#closeRound = undefined;
      this.#recordRound(round.answered, round.asked);
      close();
    };
    for (const index of this.#running) {
      asked.add(index);
      if (this.#pending.has(index)) continue;
      const runner = this.#runners[index]!;
      this.#pending.add(index);
      open++;
      void this.#ask(runner).then((snapshot) => {
        this.#pending.delete(index);
        if (snapshot) {
          if (this.#round === round) answered.set(index, snapshot);
          else this.#late.push(snapshot);
        }
        if (--open === 0) this.#closeRound?.();
      });
    }
    if (open === 0) this.#closeRound();
  }

  /** One runner's answer, or undefined when it failed or took too long for the transport. */
  async #ask(runner: Runner): Promise<RunnerSnapshot | undefined> {
    try {
      const [metrics, checks] = await Promise.all([
        runner.api.metrics(),
        runner.api.checks?.().catch(() => undefined),
      ]);
      const snapshot: RunnerSnapshot = { runner: runner.index, atMs: this.#o.clock.now(), metrics };
      if (checks) snapshot.checks = checks;
      return metrics.length > 0 ? snapshot : undefined;
    } catch {
      return undefined;
    }
  }

  #recordRound(answered: Map<number, RunnerSnapshot>, asked: ReadonlySet<number>): void {
    if (this.#closed) return;
    const now = this.#o.clock.now();
    const snapshots = [...this.#late, ...answered.values()];
    this.#late = [];
    for (const s of snapshots) {
      this.latest.set(s.runner, s);
      for (const m of s.metrics) this.contains[m.name.split('{')[0]!] = m.contains;
    }
    const polls: RunnerPoll[] = snapshots.map((s) => ({
      runner: s.runner,
      metrics: s.metrics,
      ...(s.checks ? { checks: s.checks } : {}),
    }));
    const silent = [...asked].filter((i) => this.#running.has(i) && !answered.has(i));
    this.#o.onPoll?.({ atMs: now, answered, silent, running: this.#running, latest: this.latest });
    // The first round in which nobody answered is left out: that is how a test ends (k6 answers
    // nothing between its last iteration and its exit), and a point would show an interval without
    // requests; the next round, or `finish` from the summaries, covers it. Only from the second such
    // round on (every runner hangs) do lines say so.
    this.#emptyRounds = snapshots.length === 0 ? this.#emptyRounds + 1 : 0;
    if (this.#emptyRounds === 1) return;
    // A runner that ended has no active VUs, whatever its last answer said.
    for (const r of this.#runners)
      if (!this.#testing.has(r.index)) polls.push({ runner: r.index, ended: true });
    this.#timeline.record(now, polls);
    const line = this.#lines.record(now, polls);
    if (line) this.#logLine(line, silent, this.#testing.size, false);
  }

  #logLine(point: TimelinePoint, silent: readonly number[], running: number, ended: boolean): void {
    const parts = [
      `t=${Math.round(point.tS)}s`,
      ended ? `ended: runners=0/${this.#runners.length}` : `runners=${running}/${this.#runners.length}`,
      `VUs=${point.vus}`,
      `RPS=${point.rps.toFixed(point.rps < 10 ? 1 : 0)}`,
      `errors=${(100 * point.errorRate).toFixed(2)}%`,
    ];
    if (point.checksFailed !== undefined) parts.push(`checks_failed=${point.checksFailed}`);
    if (point.p95MinMs !== undefined && point.p95MaxMs !== undefined) {
      parts.push(
        point.p95MinMs === point.p95MaxMs
          ? `p95=${point.p95MinMs.toFixed(1)}ms`
          : `p95=${point.p95MinMs.toFixed(1)}..${point.p95MaxMs.toFixed(1)}ms`,
      );
    }
    if (silent.length > 0) parts.push(`(no answer: runner ${silent.join(', ')})`);
    this.#o.log.info(parts.join(' '));
  }
}

/**
 * A runner's end-of-test summary in the shape of a `/v1/metrics` answer, with the fields the
 * timeline reads (`http_reqs.count`, `http_req_failed.passes`, `http_req_duration.avg`/`p(95)`,
 * `checks.passes`/`fails`); `{}` without a summary (the runner keeps its last polled counts).
 */
function summaryPoll(summary: RunnerSummary | undefined): Pick<RunnerPoll, 'metrics' | 'checks'> {
  if (!summary) return {};
  const m = summary.metrics;
  const metrics: K6LiveMetric[] = [];
  const reqs = m[K6_METRIC.httpReqs];
  metrics.push({
    name: K6_METRIC.httpReqs,
    type: 'counter',
    contains: 'default',
    sample: { count: reqs?.type === 'counter' ? reqs.count : 0 },
  });
  const failed = m[K6_METRIC.httpReqFailed];
  if (failed?.type === 'rate')
    metrics.push({
      name: K6_METRIC.httpReqFailed,
      type: 'rate',
      contains: 'default',
      sample: { passes: failed.passes, fails: failed.fails },
    });
  const duration = m[K6_METRIC.httpReqDuration];
  if (duration?.type === 'trend') {
    const p95 = gridValueAt(duration.grid, 0.95);
    metrics.push({
      name: K6_METRIC.httpReqDuration,
      type: 'trend',
      contains: 'time',
      sample: { avg: duration.avg, ...(p95 === undefined ? {} : { 'p(95)': p95 }) },
    });
  }
  const checks = m.checks;
  return {
    metrics,
    ...(checks?.type === 'rate' ? { checks: { passes: checks.passes, fails: checks.fails } } : {}),
  };
}
