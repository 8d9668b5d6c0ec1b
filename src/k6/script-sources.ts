import type { MetricContains } from '../result/schema.ts';

/**
 * What the script's sources say that k6 does not report: read from the text of the k6 archive
 * (the script and every module it imports), by pattern, so a name built at run time is not found.
 */

/** Whether the script reads values that splitting over runners changes (see `splittingWarnings` in src/run/preflight.ts). */
export interface ScriptReads {
  /** It mentions `__VU` or `vu.idInInstance`: VU numbers repeat across runners. */
  vu: boolean;
  /** It mentions `__ITER` or `iterationInScenario`: a VU's own iteration count. */
  vuIterations: boolean;
  /**
   * It mentions `iterationInTest` (`exec.scenario.iterationInTest`): dense across runners only for
   * some executors (`sparseIterationScenarios` in src/k6/executors.ts).
   */
  iterationInTest: boolean;
  /**
   * It mentions a property of `exec.instance` (`iterationsCompleted`, `iterationsInterrupted`,
   * `vusActive`, `vusInitialized`, `currentTestRunDuration`): each runner is its own instance, so
   * they count one runner's share (k6 `internal/js/modules/k6/execution/execution.go`, `newInstanceInfo`).
   */
  instance: boolean;
}

/**
 * What custom metrics measure, as the script declares them: `new Trend('name', true)` and
 * `new Gauge('name', true)` hold time (ms), the rest default. Read from the archive's sources (the
 * script and its imports), since a runner's summary export does not say it and k6's REST API lists
 * a metric only once it has a sample. A metric whose name is not a literal is not found here.
 * @returns `contains` by metric name, only for the metrics found to hold time.
 */
export function declaredContains(sources: string): Record<string, MetricContains> {
  const out: Record<string, MetricContains> = {};
  const re = /new\s+(?:Trend|Gauge)\s*\(\s*(['"`])([A-Za-z_][A-Za-z0-9_]*)\1\s*,\s*true\s*\)/g;
  for (const m of sources.matchAll(re)) out[m[2]!] = 'time';
  return out;
}

/** Whether the script reads values that splitting changes ({@link ScriptReads}). */
export function scriptReads(sources: string): ScriptReads {
  return {
    vu: /\b__VU\b|\bvu\.idInInstance\b/.test(sources),
    vuIterations: /\biterationInScenario\b|\b__ITER\b/.test(sources),
    iterationInTest: /\biterationInTest\b/.test(sources),
    instance:
      /\binstance\s*\.\s*(?:iterationsCompleted|iterationsInterrupted|vusActive|vusInitialized|currentTestRunDuration)\b/.test(
        sources,
      ),
  };
}

/** Which of k6's lifecycle functions the script exports ({@link exportedLifecycle}). */
export interface ExportedLifecycle {
  setup: boolean;
  teardown: boolean;
}

/**
 * Whether the sources export `setup` and `teardown`, by pattern: `export [async] function setup`,
 * `export const|let|var setup`, `export { setup }` or `export { fn as setup }` (also re-exported
 * from another module, whose text is in the archive too), and CommonJS `exports.setup =`. k6 calls
 * them only when the script exports them (k6 `js/runner.go` `runPart`: a missing export is skipped
 * and gives no data), so a run logs "setup() ran" only for a script that has one.
 */
export function exportedLifecycle(sources: string): ExportedLifecycle {
  const exported = (name: string) =>
    new RegExp(
      String.raw`\bexport\s+(?:async\s+)?function\s*\*?\s*${name}\b|\bexport\s+(?:const|let|var)\s+${name}\b|\bexport\s*\{(?:[^}]*,)?\s*(?:[\w$]+\s+as\s+)?${name}\s*[,}]|\bexports\.${name}\s*=`,
    ).test(sources);
  return { setup: exported('setup'), teardown: exported('teardown') };
}

/**
 * Whether the sources name `setup` and `teardown` at all (as a word, anywhere): a script whose
 * sources never do cannot export them, so they need not be asked for (k6 would skip them, `js/runner.go`
 * `runPart`). Unlike {@link exportedLifecycle} this has no false negatives; a mention in a comment,
 * a string or a path is a false positive, on the safe side.
 */
export function namedLifecycle(sources: string): ExportedLifecycle {
  return { setup: /\bsetup\b/.test(sources), teardown: /\bteardown\b/.test(sources) };
}

/** Whether the sources mention `handleSummary` (then the script's own is called once after the run). */
export function mentionsHandleSummary(sources: string): boolean {
  return /\bhandleSummary\b/.test(sources);
}
