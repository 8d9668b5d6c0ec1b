import type { Runner } from '../backends/backend.ts';
import { K6_METRIC } from '../k6/metrics.ts';
import type { K6LiveMetric } from '../k6/rest.ts';
import type { Logger } from '../log.ts';
import type { MetricContains } from '../result/result.ts';
import type { Clock } from './clock.ts';

/** One runner's last live counts. */
interface RunnerCounts {
  requests: number;
  failedRequests: number;
  iterations: number;
}

/**
 * Progress stage (during the monitor): every `intervalS`, one line with the aggregate RPS since
 * the last line, VUs, error percentage and iterations, from every running runner's `/v1/metrics`.
 * A runner that ended, or answers with nothing while ending, keeps its last counts. It also
 * records what each metric contains (`time`, `data`, `default`), which the summary export lacks.
 */
export class Progress {
  /** What each metric seen on `/v1/metrics` contains, by metric name (without tags). */
  readonly contains: Record<string, MetricContains> = {};
  private readonly perRunner = new Map<number, RunnerCounts>();
  private lastAtMs: number;
  private lastRequests = 0;
  private nextAtMs: number;
  private readonly runners: readonly Runner[];
  private readonly startedAtMs: number;
  private readonly intervalMs: number;
  private readonly clock: Clock;
  private readonly log: Logger;

  /**
   * @param startedAtMs epoch ms of the start (for `t=`).
   * @param intervalS seconds between lines.
   */
  constructor(runners: readonly Runner[], startedAtMs: number, intervalS: number, clock: Clock, log: Logger) {
    this.runners = runners;
    this.startedAtMs = startedAtMs;
    this.intervalMs = intervalS * 1000;
    this.clock = clock;
    this.log = log;
    this.lastAtMs = clock.now();
    this.nextAtMs = this.lastAtMs + this.intervalMs;
  }

  /** Logs a line when one is due and some runner in `running` (indexes) is still running. */
  async maybeReport(running: ReadonlySet<number>): Promise<void> {
    if (this.clock.now() < this.nextAtMs || running.size === 0) return;
    this.nextAtMs = this.clock.now() + this.intervalMs;
    const polled = await Promise.all(
      this.runners
        .filter((r) => running.has(r.index))
        .map(async (r) => ({
          index: r.index,
          metrics: await r.api.metrics().catch((): K6LiveMetric[] => []),
        })),
    );
    let vus = 0;
    for (const { index, metrics } of polled) {
      if (metrics.length === 0) continue;
      const sample = (name: string) => metrics.find((m) => m.name === name)?.sample;
      const requests = sample(K6_METRIC.httpReqs)?.count ?? 0;
      vus += sample(K6_METRIC.vus)?.value ?? 0;
      this.perRunner.set(index, {
        requests,
        failedRequests: (sample(K6_METRIC.httpReqFailed)?.rate ?? 0) * requests,
        iterations: sample(K6_METRIC.iterations)?.count ?? 0,
      });
      for (const m of metrics) this.contains[m.name.split('{')[0]!] = m.contains;
    }
    const all = [...this.perRunner.values()];
    const sum = (pick: (c: RunnerCounts) => number) => all.reduce((a, c) => a + pick(c), 0);
    const requests = sum((c) => c.requests);
    const failedRequests = sum((c) => c.failedRequests);
    const now = this.clock.now();
    const rps = (requests - this.lastRequests) / Math.max((now - this.lastAtMs) / 1000, 1e-3);
    this.lastAtMs = now;
    this.lastRequests = requests;
    const elapsedS = Math.round((now - this.startedAtMs) / 1000);
    const errors = requests > 0 ? ((100 * failedRequests) / requests).toFixed(2) : '0.00';
    this.log.info(
      `t=${elapsedS}s runners=${running.size}/${this.runners.length} VUs=${vus} RPS=${rps.toFixed(0)} ` +
        `requests=${requests} errors=${errors}% iterations=${sum((c) => c.iterations)}`,
    );
  }
}
