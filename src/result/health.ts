import { K6_METRIC } from '../k6/metrics.ts';
import type { RunnerSummary } from '../k6/summary.ts';
import type { LoadGenerator, RunnerHealth } from './load-generator-schema.ts';

/**
 * The load generator's health: whether the runners themselves held the test back (dropped
 * iterations, VUs pinned at `maxVUs`, a busy CPU), so that the run's figures describe the runners
 * rather than the system under test. Shape and units: src/result/load-generator-schema.ts.
 */

/** A runner that used this fraction of one CPU core or more over its test is saturated. */
export const CPU_SATURATED = 0.9;

/**
 * The shortest test, in s, over which a runner's CPU share is a figure: over a shorter one, k6's own
 * start (VUs initialised, the first iterations compiled) dominates, and a 20-iteration test of a
 * few ms reads as 100% of a core. A shorter test's CPU is recorded as `unknown`.
 */
export const CPU_MIN_WINDOW_S = 5;

/** What one runner left that tells its health. */
export interface RunnerLoad {
  summary: RunnerSummary | undefined;
  /** k6's "Insufficient VUs" warnings in its log; undefined when the log was not read. */
  insufficientVUs: number | undefined;
  /** CPU time it used during its test, in s; undefined when not read. */
  cpuSeconds: number | undefined;
  /** The wall-clock time the CPU time is over, in s (its own test's duration). */
  durationS: number;
}

/**
 * The run's load-generator health. Saturated when any iteration was dropped, when a runner's VUs
 * reached `vus_max` in a script with an arrival-rate scenario and k6 warned "Insufficient VUs",
 * or when a runner used {@link CPU_SATURATED} of a core or more over a test of at least
 * {@link CPU_MIN_WINDOW_S}.
 * @param arrivalRate whether the script has an arrival-rate scenario (else `vus` at `vus_max` is normal).
 */
export function loadGeneratorHealth(runners: readonly RunnerLoad[], arrivalRate: boolean): LoadGenerator {
  const health = runners.map((r, index) => runnerHealth(index, r, arrivalRate));
  const reasons = health.flatMap(reasonsOf);
  const cpus = health.flatMap((h) => (h.cpu === 'unknown' ? [] : [h.cpu]));
  const warned = health.map((h) => h.insufficientVUs);
  return {
    saturated: reasons.length > 0,
    reasons,
    droppedIterations: sum(health.map((h) => h.droppedIterations)),
    insufficientVUs: warned.some((w) => w === 'unknown') ? 'unknown' : sum(warned as number[]),
    vusMaxReached: health.some((h) => h.vusMaxReached),
    cpu: cpus.length > 0 ? Math.max(...cpus) : 'unknown',
    runners: health,
  };
}

/** The one warning line reports put at their top when the load generator saturated; else undefined. */
export function saturationWarning(
  loadGenerator: Pick<LoadGenerator, 'saturated' | 'reasons'> | undefined,
): string | undefined {
  if (!loadGenerator?.saturated) return undefined;
  return `⚠️ The load generator saturated: ${loadGenerator.reasons.join('; ')}. These figures measure the runners as much as the system under test.`;
}

function runnerHealth(index: number, r: RunnerLoad, arrivalRate: boolean): RunnerHealth {
  const m = r.summary?.metrics ?? {};
  const count = (name: string) => {
    const metric = m[name];
    return metric?.type === 'counter' ? metric.count : 0;
  };
  const gaugeMax = (name: string) => {
    const metric = m[name];
    return metric?.type === 'gauge' ? Math.max(metric.max, metric.value) : 0;
  };
  const vus = gaugeMax(K6_METRIC.vus);
  const vusMax = gaugeMax(K6_METRIC.vusMax);
  return {
    index,
    droppedIterations: count(K6_METRIC.droppedIterations),
    iterations: count(K6_METRIC.iterations),
    insufficientVUs: r.insufficientVUs ?? 'unknown',
    vus,
    vusMax,
    vusMaxReached: arrivalRate && vusMax > 0 && vus >= vusMax,
    cpu:
      r.cpuSeconds !== undefined && r.durationS >= CPU_MIN_WINDOW_S ? r.cpuSeconds / r.durationS : 'unknown',
  };
}

function reasonsOf(h: RunnerHealth): string[] {
  const out: string[] = [];
  if (h.droppedIterations > 0) {
    const total = h.droppedIterations + h.iterations;
    const pct = (100 * h.droppedIterations) / total;
    out.push(
      `runner ${h.index} dropped ${count(h.droppedIterations)} of ${count(total)} iterations (${pct.toFixed(1)}%)`,
    );
  }
  if (h.vusMaxReached && h.insufficientVUs !== 'unknown' && h.insufficientVUs > 0) {
    const times = h.insufficientVUs === 1 ? 'once' : `${h.insufficientVUs} times`;
    out.push(
      `runner ${h.index} hit maxVUs (${count(h.vus)} of ${count(h.vusMax)}) and k6 warned "Insufficient VUs" ${times}`,
    );
  }
  if (h.cpu !== 'unknown' && h.cpu >= CPU_SATURATED) {
    out.push(`runner ${h.index} used ${Math.round(h.cpu * 100)}% of a core`);
  }
  return out;
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
