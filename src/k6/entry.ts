import path from 'node:path';
import { compactSummary } from './compact-summary.ts';

/**
 * The generated modules k6 runs instead of the user's script (docs/equivalence-plan.md).
 *
 * Runner entry module: every runner runs a module that re-exports the script (`export *`: options,
 * setup, teardown, every scenario's exec function) and overrides two exports locally (a local
 * export wins over `export *`, ECMAScript 16.2.1.6.3):
 * - `handleSummary`: never the user's (a runner's slice is not the test): it writes the runner's
 *   compact summary (`compactSummary` in summary.ts) where {@link SUMMARY_OUT_ENV} says (a file,
 *   or `stdout` on Kubernetes), or nothing when that is unset; k6 still writes `--summary-export`
 *   whatever handleSummary returns, which stays the fallback on the local backend;
 * - `options`: the script's options with `handleSummaryTimeout` at k6's default (the runner's
 *   handleSummary is ours) and the consolidated thresholds of `k6 inspect`, each with
 *   `abortOnFail: false`, so a runner's slice never aborts the test (the orchestrator judges
 *   abortOnFail on the global aggregate, src/run/abort.ts). Keeping the thresholds keeps k6's
 *   submetrics in the summary export and the per-metric `tainted` flag of `/v1/metrics`.
 * `export *` never re-exports `default`, and `export { default } from` is a SyntaxError when the
 * script has none, so that line is added only when some scenario runs `default`.
 *
 * Summary module: one k6 process, after the run, calls the user's `handleSummary(data)` with the
 * global data object read from a JSON file, so what it returns is written (files, stdout, stderr)
 * by k6 itself, exactly as a plain `k6 run` writes it.
 */

/** The specifier a generated module imports the script with: its absolute path (k6 resolves `open()` from it). */
function scriptSpecifier(script: string): string {
  return JSON.stringify(path.resolve(script));
}

/**
 * Whether some scenario runs the script's `default` function: no scenarios (the `vus`/`iterations`
 * shortcuts), or a scenario without `exec` or with `exec: 'default'` (k6 `lib/executor`).
 * @param scenarios `options.scenarios` as `k6 inspect` prints it.
 */
export function runsDefault(scenarios: unknown): boolean {
  if (scenarios === null || typeof scenarios !== 'object') return true;
  const list = Object.values(scenarios as Record<string, { exec?: unknown }>);
  return (
    list.length === 0 ||
    list.some((s) => s?.exec === undefined || s.exec === null || s.exec === '' || s.exec === 'default')
  );
}

/**
 * The consolidated thresholds with `abortOnFail` switched off: strings stay strings, objects keep
 * `threshold` and `delayAbortEval`.
 * @param thresholds `options.thresholds` as `k6 inspect` prints it (`{metric: [expr | {threshold, abortOnFail, delayAbortEval}]}`).
 */
export function withoutAbortOnFail(thresholds: Record<string, unknown[]>): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(thresholds).map(([metric, list]) => [
      metric,
      list.map((t) => (typeof t === 'object' && t !== null ? { ...t, abortOnFail: false } : t)),
    ]),
  );
}

/**
 * The thresholds every runner gets: the consolidated ones {@link withoutAbortOnFail}, or, when the
 * test has none, one that cannot fail (`iterations: count>=0`). A runner whose segment gets no VU
 * in any scenario (several scenarios of fewer VUs than runners: k6 gives each scenario's first VU
 * to the first segment) observes no metric, and k6 v2.2.0's end-of-test summary then crashes ("No
 * initial value") and writes no export. A metric with a threshold is always in the summary. That
 * guard is not one of the script's thresholds: the preflight parses the script's before.
 * @param thresholds `options.thresholds` as `k6 inspect` prints it (`{metric: [expr | {threshold, abortOnFail, delayAbortEval}]}`).
 */
export function runnerThresholds(thresholds: Record<string, unknown[]>): Record<string, unknown[]> {
  return Object.keys(thresholds).length === 0 ? { iterations: ['count>=0'] } : withoutAbortOnFail(thresholds);
}

/**
 * A runner's `handleSummaryTimeout`: k6's default (`lib/options.go`, 2 minutes). A script's own
 * (say `1ms`) would otherwise cut the runner's summary short, and with it k6's export, so that
 * no runner left a summary.
 */
export const RUNNER_HANDLE_SUMMARY_TIMEOUT = '120s';

/**
 * Source of the runner entry module.
 * @param options.script path of the user's script (made absolute).
 * @param options.thresholds the thresholds every runner gets (already without abortOnFail), never
 *   empty: a runner whose segment gets no VU observes no metric and k6 v2.2.0's summary then
 *   crashes, so a test without thresholds gets one that cannot fail ({@link runnerThresholds}).
 * @param options.runsDefault whether to re-export `default` ({@link runsDefault}).
 */
export function runnerEntryModule(options: {
  script: string;
  thresholds: Record<string, unknown[]>;
  runsDefault: boolean;
}): string {
  const from = scriptSpecifier(options.script);
  return [
    '// Generated by k6-distributed: what every runner runs (docs/equivalence-plan.md).',
    `import * as user from ${from};`,
    "import { b64encode as k6dB64encode } from 'k6/encoding';",
    `export * from ${from};`,
    ...(options.runsDefault ? [`export { default } from ${from};`] : []),
    "// abortOnFail is judged on the whole test by the orchestrator, never on one runner's slice.",
    "// The runner's handleSummary is ours (its summary for the aggregation): the script's",
    '// handleSummaryTimeout is for its own handleSummary, which the summary module runs.',
    `export const options = Object.assign({}, user.options, { thresholds: ${JSON.stringify(options.thresholds)}, handleSummaryTimeout: '${RUNNER_HANDLE_SUMMARY_TIMEOUT}' });`,
    "// A runner's slice is not the test: the user's handleSummary() runs once, on the global data,",
    '// after the run. A runner writes its compact summary for the aggregation instead.',
    `const k6dCompactSummary = ${compactSummary.toString()};`,
    'export function handleSummary(data) {',
    `  const out = __ENV.${SUMMARY_OUT_ENV};`,
    '  return out ? { [out]: k6dCompactSummary(data, k6dB64encode) } : {};',
    '}',
    '',
  ].join('\n');
}

/**
 * The environment variable that tells a runner's entry module where its handleSummary writes the
 * compact summary: a file path, or `stdout` (k6's handleSummary keys).
 */
export const SUMMARY_OUT_ENV = 'K6D_SUMMARY_OUT';

/** The environment variable that names the JSON file of the global summary data. */
export const SUMMARY_DATA_ENV = 'K6D_SUMMARY_DATA';

/**
 * Source of the summary module: one empty iteration, and a `handleSummary` that calls the user's
 * with the global data object from the file named by {@link SUMMARY_DATA_ENV} (whose `state` says
 * whether the orchestrator's own stdout and stderr are terminals: the output is passed through it).
 * @param options.script path of the user's script (made absolute).
 * @param options.handleSummaryTimeout the script's `handleSummaryTimeout` as k6 prints it, if any.
 */
export function summaryModule(options: { script: string; handleSummaryTimeout?: string }): string {
  const from = scriptSpecifier(options.script);
  const timeout = options.handleSummaryTimeout
    ? `, handleSummaryTimeout: ${JSON.stringify(options.handleSummaryTimeout)}`
    : '';
  return [
    "// Generated by k6-distributed: the user's handleSummary() once, on the whole test's data.",
    `import * as user from ${from};`,
    `const data = JSON.parse(open(__ENV.${SUMMARY_DATA_ENV}));`,
    '// k6 always has the key, undefined without setup data (JSON cannot carry undefined).',
    "if (!('setup_data' in data)) data.setup_data = undefined;",
    `export const options = { vus: 1, iterations: 1, summaryTrendStats: data.options.summaryTrendStats${timeout} };`,
    'export default function () {}',
    'export function handleSummary() {',
    "  return typeof user.handleSummary === 'function' ? user.handleSummary(data) : {};",
    '}',
    '',
  ].join('\n');
}
