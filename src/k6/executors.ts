import { parseGoDuration } from './go-syntax.ts';

/**
 * How k6 schedules a test and splits it over instances, as far as this product needs it: which
 * executors run for a set time (grafana/k6 `lib/executor/*.go`), and the execution segments that
 * give each runner its slice (grafana/k6 `lib/execution_segment.go`). k6 itself scales each
 * scenario's VUs and iterations to a runner's segment; these functions only decide what the
 * product must know before it starts the runners.
 */

/**
 * Executors that run for a set time, `duration` or the sum of `stages` (k6 `lib/executor`:
 * `constant_vus.go`, `ramping_vus.go`, `constant_arrival_rate.go`, `ramping_arrival_rate.go`,
 * `externally_controlled.go`). `shared-iterations` and `per-vu-iterations` end when their
 * iterations are done, `maxDuration` at the latest.
 */
const TIMED_EXECUTORS = new Set([
  'constant-vus',
  'ramping-vus',
  'constant-arrival-rate',
  'ramping-arrival-rate',
  'externally-controlled',
]);

/**
 * Executors that start iterations at a rate, with `preAllocatedVUs` (k6 `lib/executor`:
 * `constant_arrival_rate.go`, `ramping_arrival_rate.go`).
 */
const ARRIVAL_RATE_EXECUTORS = new Set(['constant-arrival-rate', 'ramping-arrival-rate']);

/**
 * The earliest a test can end by itself, in s: the latest, over its scenarios that run for a set
 * time, of `startTime` plus `duration` (or the sum of `stages`' durations); 0 when none does
 * (`shared-iterations` and `per-vu-iterations` may end at any time). A test that is aborted or
 * stopped ends earlier. Durations as k6 prints them (k6 `lib/executor`).
 * @param scenarios `options.scenarios` as `k6 inspect` prints them (`{name: {executor, startTime,
 *   duration | stages: [{duration, target}], …}}`); anything else counts as no scenario.
 * @throws Error when a duration is not one k6 prints ({@link parseGoDuration}).
 */
export function earliestEndS(scenarios: unknown): number {
  if (scenarios === null || typeof scenarios !== 'object') return 0;
  const duration = (value: unknown) => (typeof value === 'string' ? parseGoDuration(value) : 0);
  let end = 0;
  for (const scenario of Object.values(scenarios as Record<string, Record<string, unknown>>)) {
    if (!scenario || !TIMED_EXECUTORS.has(String(scenario.executor))) continue;
    const stages = Array.isArray(scenario.stages) ? (scenario.stages as Array<{ duration?: unknown }>) : [];
    const length =
      stages.length > 0
        ? stages.reduce((sum, s) => sum + duration(s.duration), 0)
        : duration(scenario.duration);
    end = Math.max(end, duration(scenario.startTime) + length);
  }
  return end;
}

/** Whether any scenario of `options.scenarios` (as `k6 inspect` prints them) runs an arrival-rate executor. */
export function hasArrivalRate(scenarios: unknown): boolean {
  if (scenarios === null || typeof scenarios !== 'object') return false;
  return Object.values(scenarios as Record<string, { executor?: unknown } | null>).some((s) =>
    ARRIVAL_RATE_EXECUTORS.has(String(s?.executor)),
  );
}

/** An arrival-rate scenario that cannot give every runner a pre-allocated VU. */
export interface ShortArrivalRate {
  /** The scenario's name (its key in `options.scenarios`). */
  name: string;
  /** Its `preAllocatedVUs` (0 when not given). */
  preAllocatedVUs: number;
}

/**
 * The arrival-rate scenarios with fewer `preAllocatedVUs` than `runners`, in the order given. k6
 * scales a scenario's `preAllocatedVUs` to each runner's execution segment, whole VUs only
 * (k6 `lib/execution_segment.go`, `ExecutionTuple.ScaleInt64`), so with fewer VUs than segments
 * some runners start that scenario with none: they allocate VUs during the test, from `maxVUs`,
 * or drop iterations (k6 `lib/executor/constant_arrival_rate.go`, `ramping_arrival_rate.go`).
 * Other executors are never listed.
 * @param scenarios `options.scenarios` as `k6 inspect` prints them.
 * @param runners the number of runners (execution segments).
 */
export function shortArrivalRates(scenarios: unknown, runners: number): ShortArrivalRate[] {
  const out: ShortArrivalRate[] = [];
  for (const [name, scenario] of Object.entries(
    (scenarios ?? {}) as Record<string, Record<string, unknown>>,
  )) {
    const preAllocatedVUs = Number(scenario.preAllocatedVUs ?? 0);
    if (ARRIVAL_RATE_EXECUTORS.has(String(scenario.executor)) && preAllocatedVUs < runners) {
      out.push({ name, preAllocatedVUs });
    }
  }
  return out;
}

/**
 * Executors whose `exec.scenario.iterationInTest` has gaps when the scenario is split: each VU runs
 * its own iterations (`per-vu-iterations`) or loops for a time (`constant-vus`, `ramping-vus`), so a
 * runner starts iterations at the pace of its VUs, while every executor numbers a runner's k-th
 * iteration by the striped index of its execution segment (k6 `lib/executor/base_executor.go`
 * `nextIterationCounters`, `lib/execution_segment.go` `SegmentedIndex.Next`). With 3 VUs × 5
 * per-vu-iterations on 2 runners, runner 0 (2 VUs, even indices) reaches 18 where k6 reaches 14.
 * `shared-iterations` and the arrival-rate executors start iterations at the segment's own share,
 * so the indices stay dense (checked with k6 v2.2.0 at 2 runners).
 */
const SPARSE_ITERATION_EXECUTORS = new Set(['per-vu-iterations', 'constant-vus', 'ramping-vus']);

/**
 * The scenarios, in the order given, whose `exec.scenario.iterationInTest` has gaps over several
 * runners ({@link SPARSE_ITERATION_EXECUTORS}), with their executor.
 * @param scenarios `options.scenarios` as `k6 inspect` prints them.
 */
export function sparseIterationScenarios(scenarios: unknown): Array<{ name: string; executor: string }> {
  return Object.entries((scenarios ?? {}) as Record<string, Record<string, unknown>>)
    .map(([name, scenario]) => ({ name, executor: String(scenario?.executor) }))
    .filter(({ executor }) => SPARSE_ITERATION_EXECUTORS.has(executor));
}

/**
 * The execution segments of `n` equal runners, `0:1/N`, `1/N:2/N`, …, `(N-1)/N:1`: runner i runs
 * the slice (i/N, (i+1)/N] of every scenario (k6 `--execution-segment`, `lib/execution_segment.go`
 * `ExecutionSegment`).
 * @param n the number of runners, at least 1.
 */
export function executionSegments(n: number): string[] {
  const at = (i: number) => (i === 0 ? '0' : i === n ? '1' : `${i}/${n}`);
  return Array.from({ length: n }, (_, i) => `${at(i)}:${at(i + 1)}`);
}

/**
 * The sequence `0,1/N,…,(N-1)/N,1` every runner gets (k6 `--execution-segment-sequence`,
 * `lib/execution_segment.go` `ExecutionSegmentSequence`): with it, k6 on each runner spreads VUs
 * and iterations over the segments as one instance running the whole test would.
 * @param n the number of runners, at least 1.
 */
export function executionSegmentSequence(n: number): string {
  return ['0', ...Array.from({ length: n - 1 }, (_, i) => `${i + 1}/${n}`), '1'].join(',');
}
