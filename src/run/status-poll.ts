import type { Runner, VusRecord } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import { K6_STATUS, REST_TIMEOUT_MS } from '../k6/rest.ts';

/**
 * How often the monitor reads every running runner's `GET /v1/status`, in ms: twice per period at
 * which k6 samples its `vus` gauge (1 s, k6 v2.2.0 `internal/execution/scheduler.go`,
 * `emitVUsAndVUsMax`), so that a VU count held for a second is always seen whatever the phase of
 * k6's own sampling; and never more than {@link MAX_STATUS_REQUESTS_PER_S} requests a second in all
 * (on Kubernetes each goes through the API server's pod proxy).
 */
export function statusPollMs(runners: number): number {
  return Math.max(500, (runners * 1000) / MAX_STATUS_REQUESTS_PER_S);
}

/** How long one poll waits for the answers, in ms of real time; later answers are kept for the next. */
export const POLL_WAIT_MS = 250;

/** The most status requests a second the monitor sends to all runners together. */
export const MAX_STATUS_REQUESTS_PER_S = 100;

/** One sample of the whole test's `vus` gauge: the sum of every runner's active VUs at one moment. */
export interface VusSample {
  /** Epoch ms of the poll. */
  atMs: number;
  /** Active VUs of every runner together. */
  vus: number;
}

/**
 * The monitor's reading of `GET /v1/status` (during the monitor). Runners run with `--linger`, so a
 * runner whose test has ended does not exit: it stays at status 9 (Ended), 10 (Interrupted: stopped,
 * `test.abort()`) or 11 (MarkedAsFailed: `exec.test.fail()`) until its linger is ended; the status
 * is how the end is seen. Each poll where every running runner answered is also a sample of the
 * whole test's `vus` gauge: the sum of the runners' active VUs at that moment (a runner whose test
 * ended has none), taken twice a second (k6 takes its own once a second). The runners' summaries cannot give it:
 * each one's `vus` also holds the samples of its paused wait before the start and of its linger.
 */
export class RunnerStatuses {
  /** Runners whose test has ended (status 9 or later), by index. */
  readonly ended = new Set<number>();
  /** The status each ended runner reported first. */
  readonly endStatus = new Map<number, number>();
  /** The `vus` samples, in time order. */
  readonly vusSamples: VusSample[] = [];
  /** The time between two polls, in ms ({@link statusPollMs}). */
  readonly intervalMs: number;
  private lastPollMs = Number.NEGATIVE_INFINITY;
  /** Runners whose poll has not been answered yet. */
  private readonly inFlight = new Set<number>();
  /** Runners seen ending since the previous {@link poll} returned. */
  private readonly newlyEnded: number[] = [];
  private readonly runners: readonly Runner[];
  private readonly clock: Clock;

  constructor(runners: readonly Runner[], clock: Clock) {
    this.runners = runners;
    this.clock = clock;
    this.intervalMs = statusPollMs(runners.length);
    // A backend that sees a runner's end by itself (Runner.testEnded) saves the poll its wait.
    for (const [i, runner] of runners.entries())
      void runner.testEnded?.then((status) => this.record(i, status));
  }

  /** Records that runner `i`'s test has ended with `status` (9 or later), once. */
  private record(i: number, status: number): void {
    if (this.ended.has(i)) return;
    this.ended.add(i);
    this.endStatus.set(i, status);
    this.newlyEnded.push(i);
  }

  /**
   * Polls the runners in `running` (indexes) whose test has not ended, at most once per
   * {@link intervalMs}, and never a runner whose previous poll is still unanswered. It waits for
   * the answers at most {@link POLL_WAIT_MS} of real time: an answer that comes later (a frozen
   * runner, a slow pod proxy) is recorded when it comes, so the monitor is never held.
   * @returns the indexes of the runners seen ending since the previous call.
   */
  async poll(running: Iterable<number>): Promise<number[]> {
    const now = this.clock.now();
    if (now - this.lastPollMs >= this.intervalMs) {
      this.lastPollMs = now;
      const live = [...running].filter((i) => !this.ended.has(i));
      const asked = live.filter((i) => !this.inFlight.has(i));
      const round = Promise.all(asked.map((i) => this.ask(i))).then((answers) => {
        // A sample only while the test runs (k6 samples no more once its test ended), and only when
        // every runner answered (a missing runner's VUs would read as none).
        const stillTesting = answers.filter((a) => a !== undefined && a.status < K6_STATUS.Ended);
        // A runner that answers from its own record (Runner.vusRecord) gives no count here (NaN).
        const counted = answers.every((a) => a !== undefined && Number.isFinite(a.vus));
        if (asked.length === live.length && counted && stillTesting.length > 0)
          this.vusSamples.push({ atMs: now, vus: stillTesting.reduce((sum, a) => sum + a!.vus, 0) });
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        round,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, POLL_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    }
    return this.newlyEnded.splice(0);
  }

  /** One runner's `GET /v1/status`; records its end as soon as it answers. */
  private async ask(i: number): Promise<{ status: number; vus: number } | undefined> {
    this.inFlight.add(i);
    try {
      // A short timeout: a runner that hangs (SIGSTOP, a frozen node) is asked again later.
      const s = await this.runners[i]!.api.status(REST_TIMEOUT_MS.poll);
      if (s.status >= K6_STATUS.Ended) this.record(i, s.status);
      return { status: s.status, vus: s.vus };
    } catch {
      return undefined;
    } finally {
      this.inFlight.delete(i);
    }
  }
}

/**
 * The whole test's `vus` samples from every runner's own record ({@link Runner.vusRecord}), with
 * the meaning of the status poll's: one per period of the wall clock (the records' `periodMs`,
 * to whose multiples their samples are aligned), the sum of every runner's active VUs in that
 * period (its last change up to it), from the first period in which every runner had started to
 * the last that began before some runner's test ended; a runner whose test had ended counts 0.
 * @returns the samples in time order (`atMs` the period's start); empty when a record is missing.
 */
export function mergeVusRecords(records: ReadonlyArray<VusRecord | undefined>): VusSample[] {
  const complete = records.filter((r): r is VusRecord => r !== undefined && r.changes.length > 0);
  if (complete.length === 0 || complete.length < records.length) return [];
  const periodMs = complete[0]!.periodMs;
  const period = (ms: number) => Math.floor(ms / periodMs);
  const from = Math.max(...complete.map((r) => period(r.changes[0]!.atMs)));
  const to = Math.max(...complete.map((r) => Math.ceil(r.endedAtMs / periodMs) - 1));
  /** Per runner: the index of its first change after the current period. */
  const next = complete.map(() => 0);
  const samples: VusSample[] = [];
  for (let p = from; p <= to; p++) {
    let vus = 0;
    for (const [i, r] of complete.entries()) {
      if (p * periodMs >= r.endedAtMs) continue;
      while (next[i]! < r.changes.length && period(r.changes[next[i]!]!.atMs) <= p) next[i]!++;
      vus += r.changes[next[i]! - 1]!.vus;
    }
    samples.push({ atMs: p * periodMs, vus });
  }
  return samples;
}
