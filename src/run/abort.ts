import type { Runner } from '../backends/backend.ts';
import type { Clock } from '../clock.ts';
import type { Failure } from '../errors.ts';
import { parseGoDuration } from '../k6/go-syntax.ts';
import { K6_METRIC } from '../k6/metrics.ts';
import type { K6LiveMetric } from '../k6/rest.ts';
import { compare, findMetric } from '../k6/thresholds.ts';
import type { Threshold } from '../k6/thresholds-parser.ts';

/**
 * abortOnFail on the live global aggregate (issue #9, docs/equivalence-plan.md). Runners never
 * abort on their own slice (their entry module switches abortOnFail off, src/k6/entry.ts); the
 * orchestrator judges the thresholds that have `abortOnFail` every 2 s (k6's threshold period,
 * `metrics/engine` in k6 v2.2.0), after their `delayAbortEval`, from every runner's
 * `GET /v1/metrics`, and stops the test only when the whole test's value has certainly crossed:
 *
 * | aggregation | live global value | abort when |
 * | --- | --- | --- |
 * | counter `count` | sum of the runners' counts (exact) | crossed |
 * | counter `rate` | sum of counts / s since the start | crossed |
 * | gauge `value` | `vus`/`vus_max` summed, others the largest of the runners that have a value | crossed |
 * | trend `min` / `max`, `p(0)` / `p(100)` | min of mins / max of maxes (exact) | crossed |
 * | trend `avg`, `med`, `p(90)`, `p(95)`; rate `rate` | within [smallest, largest runner value]: a mixture's mean or p-quantile lies between its components' | the whole interval crosses |
 * | trend `p(N)`, other N | not in `/v1/metrics` | every runner that has the metric has it `tainted`, and the metric has this one threshold |
 *
 * A runner that does not list the metric (no sample yet) is left out; a runner that has ended or
 * does not answer keeps its last answer. What is not certain is judged at the end, as k6 judges
 * every threshold at the end.
 */

/** k6's threshold evaluation period (k6 v2.2.0 `metrics/engine/engine.go`, 2 s), in ms. */
export const ABORT_EVAL_PERIOD_MS = 2000;

/** Gauges whose global value is the sum of the runners' (each holds its own VUs). */
const SUMMED_GAUGES = new Set<string>([K6_METRIC.vus, K6_METRIC.vusMax]);

/** Trend aggregations `/v1/metrics` carries, whose global value lies within the runners'. */
const BOUNDED_TREND_KEYS = new Set(['avg', 'med', 'p(90)', 'p(95)']);

/** Every runner's last `/v1/metrics` answer, by name (an empty list for a runner not heard from). */
export type LiveMetrics = ReadonlyArray<readonly K6LiveMetric[]>;

/** The live global value of a threshold: exact, an interval, or only whether every slice crossed. */
type LiveValue = { exact: number } | { low: number; high: number } | { everySliceCrossed: boolean };

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function liveValue(
  t: Threshold,
  parts: readonly K6LiveMetric[],
  elapsedS: number,
  sharesMetric: boolean,
): LiveValue | undefined {
  if (parts.length === 0) return undefined;
  const at = (key: string) => parts.map((m) => m.sample[key] ?? 0);
  const type = parts[0]!.type;
  switch (type) {
    case 'counter': {
      const count = sum(at('count'));
      if (t.aggregation === 'count') return { exact: count };
      return elapsedS > 0 ? { exact: count / elapsedS } : undefined;
    }
    case 'gauge': {
      const values = at('value');
      if (SUMMED_GAUGES.has(t.metric.split('{')[0]!)) return { exact: sum(values) };
      const set = values.filter((v) => v !== 0);
      return { exact: set.length > 0 ? Math.max(...set) : 0 };
    }
    case 'rate': {
      const rates = at('rate');
      return { low: Math.min(...rates), high: Math.max(...rates) };
    }
    case 'trend': {
      if (t.aggregation === 'min' || t.percentile === 0) return { exact: Math.min(...at('min')) };
      if (t.aggregation === 'max' || t.percentile === 100) return { exact: Math.max(...at('max')) };
      if (BOUNDED_TREND_KEYS.has(t.valueKey)) {
        const values = at(t.valueKey);
        return { low: Math.min(...values), high: Math.max(...values) };
      }
      // Tainted is per metric: it says this threshold crossed only when it is the metric's only one.
      return { everySliceCrossed: !sharesMetric && parts.every((m) => m.tainted === true) };
    }
  }
}

/**
 * `delayAbortEval` in s, read as k6 reads a duration (`types.ParseExtendedDuration`): a Go
 * duration with an optional leading number of days (`1d2h`), or a bare number of ms. Anything
 * else never lets the threshold abort live (it is still judged at the end).
 */
export function delaySeconds(text: string): number {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) / 1000;
  const days = /^(\d+)d(.*)$/.exec(text);
  try {
    return days ? Number(days[1]) * 86_400 + (days[2] ? parseGoDuration(days[2]) : 0) : parseGoDuration(text);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Whether `value` certainly crosses `t` (every value in the interval fails the expression). */
function certainlyCrossed(t: Threshold, value: LiveValue): boolean {
  if ('everySliceCrossed' in value) return value.everySliceCrossed;
  if ('exact' in value) return !compare(value.exact, t.operator, t.value);
  const { low, high } = value;
  switch (t.operator) {
    case '<':
    case '<=':
      // The smallest possible value fails: every one does.
      return !compare(low, t.operator, t.value);
    case '>':
    case '>=':
      return !compare(high, t.operator, t.value);
    case '==':
    case '===':
      return t.value < low || t.value > high;
    case '!=':
      return low === high && low === t.value;
  }
}

/**
 * The first abortOnFail threshold the live global aggregate has certainly crossed, past its
 * `delayAbortEval`, with the value seen; undefined when none has.
 * @param live every runner's last `/v1/metrics` answer.
 * @param elapsedS seconds since the synchronised start.
 */
export function crossedAbortThreshold(
  thresholds: readonly Threshold[],
  live: LiveMetrics,
  elapsedS: number,
): { threshold: Threshold; seen: string } | undefined {
  for (const t of thresholds) {
    if (!t.abortOnFail) continue;
    if (t.delayAbortEval && elapsedS < delaySeconds(t.delayAbortEval)) continue;
    const parts = live.flatMap((metrics) => {
      const m = findMetric(Object.fromEntries(metrics.map((x) => [x.name, x])), t.metric);
      return m ? [m] : [];
    });
    const sharesMetric = thresholds.some((o) => o !== t && o.metric === t.metric);
    const value = liveValue(t, parts, elapsedS, sharesMetric);
    if (value && certainlyCrossed(t, value)) {
      const seen =
        'exact' in value
          ? `${t.valueKey} ${Number(value.exact.toPrecision(6))}`
          : 'low' in value
            ? value.low === value.high
              ? `${t.valueKey} ${Number(value.low.toPrecision(6))}`
              : `${t.valueKey} between ${Number(value.low.toPrecision(6))} and ${Number(value.high.toPrecision(6))}`
            : `${t.valueKey} crossed on every runner`;
      return { threshold: t, seen };
    }
  }
  return undefined;
}

/**
 * The monitor's hook: every {@link ABORT_EVAL_PERIOD_MS}, polls the running runners'
 * `/v1/metrics` and returns the failure that stops the test when an abortOnFail threshold is
 * certainly crossed on the whole test. The failure's kind is `thresholds`: a run aborted by
 * abortOnFail exits 99, as `k6 run` does; the runners' data is kept (they are stopped through the
 * REST API and write their summaries), then aggregated and judged as usual.
 */
export class GlobalAbort {
  private readonly last: K6LiveMetric[][];
  private nextAtMs: number;
  private readonly thresholds: readonly Threshold[];
  private readonly runners: readonly Runner[];
  private readonly startedAtMs: number;
  private readonly clock: Clock;

  /**
   * @param thresholds the script's thresholds (all of them: `tainted` is per metric).
   * @param startedAtMs epoch ms of the synchronised start.
   */
  constructor(
    thresholds: readonly Threshold[],
    runners: readonly Runner[],
    startedAtMs: number,
    clock: Clock,
  ) {
    this.thresholds = thresholds;
    this.runners = runners;
    this.startedAtMs = startedAtMs;
    this.clock = clock;
    this.last = runners.map(() => []);
    this.nextAtMs = startedAtMs + ABORT_EVAL_PERIOD_MS;
  }

  /** Whether any threshold has abortOnFail (else {@link check} never polls). */
  get active(): boolean {
    return this.thresholds.some((t) => t.abortOnFail);
  }

  /**
   * When an evaluation is due, polls the runners in `running` (indexes) and judges.
   * @returns the failure to stop the test with, or undefined.
   */
  async check(running: ReadonlySet<number>): Promise<Failure | undefined> {
    const now = this.clock.now();
    if (!this.active || now < this.nextAtMs) return undefined;
    this.nextAtMs = now + ABORT_EVAL_PERIOD_MS;
    await Promise.all(
      this.runners
        .filter((r) => running.has(r.index))
        .map(async (r) => {
          const metrics = await r.api.metrics().catch((): K6LiveMetric[] => []);
          if (metrics.length > 0) this.last[r.index] = metrics;
        }),
    );
    const elapsedS = (this.clock.now() - this.startedAtMs) / 1000;
    const crossed = crossedAbortThreshold(this.thresholds, this.last, elapsedS);
    if (!crossed) return undefined;
    const { threshold: t, seen } = crossed;
    return {
      kind: 'thresholds',
      message: `test aborted after ${elapsedS.toFixed(1)} s: threshold ${t.metric} ${t.source} with abortOnFail crossed on the whole test (${seen}); every runner was stopped`,
    };
  }
}
