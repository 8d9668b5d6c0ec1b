import type { Comparison, MetricDelta } from '../compare/compare.ts';
import type { RunResult, ThresholdRow } from '../result/schema.ts';
import { formatDelta, formatDeltaInterval, formatDeltaValue } from './delta.ts';
import { everyCheck, showBidiControls } from './format.ts';
import { thresholdObserved } from './terminal/humanize.ts';

/**
 * A run as JUnit XML, the test report format CI servers read (GitLab `artifacts:reports:junit`,
 * Jenkins `junit`, Azure Pipelines, test-reporter actions): one test case per threshold expression
 * (a crossed one is a failure: `p(95)=512.3ms, limit p(95)<500`), one per check (a check with
 * fails is a failure: `20 of 40 failed`), one per runner (a runner that did not complete its
 * segment is a failure with its exit), and for a pull request's comparison one per gated metric
 * (a regression is a failure). Shape: `<testsuites>` of `<testsuite>` (name, tests, failures,
 * errors, skipped, time in s, timestamp) of `<testcase>` (classname, name, time) with an optional
 * `<failure message type>` or `<skipped message>` and `<system-out>` (the observed value).
 * Names from the script are escaped for XML 1.0 (see {@link xmlText}). Pure.
 */

/** One test case. */
export interface JUnitCase {
  /** Fixed per suite (`k6.thresholds`): Jenkins splits it on dots into package and class. */
  classname: string;
  name: string;
  failure?: { type: string; message: string; detail?: string };
  /** Why the case was not judged (a comparison without a baseline). */
  skipped?: string;
  /** What was observed, for a passing case too. */
  output?: string;
}

/** One suite of cases. */
export interface JUnitSuite {
  name: string;
  cases: JUnitCase[];
  /** ISO 8601 start of the run. */
  timestamp?: string;
  /** Seconds. */
  timeS?: number;
}

/**
 * Text for an XML 1.0 element: `& < > " '` as entities, line breaks kept (a CR becomes a LF, as
 * XML reads it anyway), characters XML 1.0 cannot hold at all (other C0 controls, U+FFFE, U+FFFF,
 * unpaired surrogates) as `\xHH`/`\uHHHH` text, and bidirectional controls shown as `[U+202E]`
 * (a CI page would otherwise show the text reversed).
 */
export function xmlText(text: string): string {
  return showBidiControls(text)
    .replace(/\r\n?/g, '\n')
    .replace(NOT_XML, (c) => {
      const code = c.charCodeAt(0);
      return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
    })
    .replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!);
}

/**
 * Text for an XML attribute (a test's name, a failure's message): as {@link xmlText}, with tabs and
 * line breaks as one space (an attribute's line break is a space to an XML parser, and a reader that
 * does not decode `&#10;` would show it as written).
 */
export function xmlAttribute(text: string): string {
  return xmlText(text.replace(/[\t\r\n]+/g, ' '));
}

/** What XML 1.0 cannot hold: C0 controls but tab, LF and CR; U+FFFE, U+FFFF; unpaired surrogates. */
const NOT_XML =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const XML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

function attributes(pairs: Record<string, string | number | undefined>): string {
  return Object.entries(pairs)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttribute(String(v))}"`)
    .join('');
}

function caseXml(c: JUnitCase): string {
  const head = `    <testcase${attributes({ classname: c.classname, name: c.name, time: 0 })}`;
  const body = [
    ...(c.failure
      ? [
          `      <failure${attributes({ message: c.failure.message, type: c.failure.type })}>${xmlText(c.failure.detail ?? c.failure.message)}</failure>`,
        ]
      : []),
    ...(c.skipped ? [`      <skipped${attributes({ message: c.skipped })}/>`] : []),
    ...(c.output ? [`      <system-out>${xmlText(c.output)}</system-out>`] : []),
  ];
  return body.length === 0 ? `${head}/>` : [`${head}>`, ...body, '    </testcase>'].join('\n');
}

/** Seconds with at most three decimals (JUnit readers parse `time` as a plain decimal). */
const seconds = (s: number | undefined) => (s === undefined ? undefined : Number(s.toFixed(3)));

const failuresOf = (cases: JUnitCase[]) => cases.filter((c) => c.failure).length;
const skippedOf = (cases: JUnitCase[]) => cases.filter((c) => c.skipped).length;

/** The document: `<testsuites name>` with the totals of every suite (suites without cases left out). */
export function junitXml(name: string, suites: JUnitSuite[], timeS?: number): string {
  const kept = suites.filter((s) => s.cases.length > 0);
  const all = kept.flatMap((s) => s.cases);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name, tests: all.length, failures: failuresOf(all), errors: 0, skipped: skippedOf(all), time: seconds(timeS) })}>`,
  ];
  for (const s of kept) {
    lines.push(
      `  <testsuite${attributes({ name: s.name, tests: s.cases.length, failures: failuresOf(s.cases), errors: 0, skipped: skippedOf(s.cases), time: seconds(s.timeS), timestamp: s.timestamp })}>`,
      ...s.cases.map(caseXml),
      '  </testsuite>',
    );
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

/** The threshold's observed value as k6 writes it (`p(95)=512.3ms`), or `p(95)=no samples`. */
function observed(result: RunResult, t: ThresholdRow): string {
  const seen = thresholdObserved(result, t);
  return `${seen.method}=${seen.value}${seen.band ? ` (inside the merge's band ${seen.band})` : ''}`;
}

/** One case per threshold expression, judged on the aggregate of every runner. */
export function thresholdCases(result: RunResult): JUnitCase[] {
  return result.thresholds.map((t) => {
    const seen = observed(result, t);
    return {
      classname: 'k6.thresholds',
      name: `${t.metric}: ${t.expression}`,
      output: seen,
      ...(t.ok
        ? {}
        : {
            failure: {
              type: 'threshold',
              message: `${seen}, limit ${t.expression}${t.abortOnFail ? ' (abortOnFail)' : ''}`,
            },
          }),
    };
  });
}

/** One case per check (in every group), with its passes and fails across the runners. */
export function checkCases(result: RunResult): JUnitCase[] {
  return everyCheck(result.rootGroup).map((c) => {
    const counts = `${c.fails} of ${c.passes + c.fails} failed`;
    return {
      classname: 'k6.checks',
      name: c.path,
      output: counts,
      ...(c.fails > 0 ? { failure: { type: 'check', message: counts } } : {}),
    };
  });
}

/** One case per runner: a failure when it did not complete its segment (its exit, its log's tail). */
export function runnerCases(result: RunResult): JUnitCase[] {
  return result.runners.map((r) => ({
    classname: 'k6.runners',
    name: `runner ${r.index} (segment ${r.segment}${r.node ? `, node ${r.node}` : ''})`,
    output: r.exit,
    ...(r.ok ? {} : { failure: { type: 'runner', message: r.exit, detail: r.logTail ?? r.exit } }),
  }));
}

/** One script's run for {@link renderJUnit}: its result, or why there is none. */
export interface JUnitRun {
  script: string;
  result?: RunResult;
  /** Why there is no result (a bad script, a run that could not start). */
  error?: string;
  /** A pull request's comparison with the baseline: the report's verdict and its comparison. */
  compared?: { verdict: string; comparison?: Comparison };
}

/** One run's suites: thresholds, checks, runners (and the comparison), named `<prefix>thresholds`. */
function suitesOf(run: JUnitRun, prefix: string): JUnitSuite[] {
  const { result } = run;
  const compared = run.compared ? [{ ...comparisonSuite(run.compared), name: `${prefix}comparison` }] : [];
  if (!result) {
    const message = `no result: ${run.error ?? 'the run ended before its result'}`;
    const failure = { type: 'error', message };
    return [
      { name: `${prefix}run`, cases: [{ classname: 'k6.run', name: run.script, failure }] },
      ...compared,
    ];
  }
  const when = { timestamp: result.startedAt, timeS: result.durationS };
  return [
    { name: `${prefix}thresholds`, cases: thresholdCases(result), ...when },
    { name: `${prefix}checks`, cases: checkCases(result), ...when },
    { name: `${prefix}runners`, cases: runnerCases(result), ...when },
    ...compared,
  ];
}

/**
 * The JUnit document of one step: one run's suites (`thresholds`, `checks`, `runners`, and
 * `comparison` on a pull request), or with several scripts each script's, named `script: thresholds`.
 */
export function renderJUnit(runs: readonly JUnitRun[]): string {
  const several = runs.length > 1;
  const suites = runs.flatMap((run) => suitesOf(run, several ? `${run.script}: ` : ''));
  const timeS = runs.reduce((sum, r) => sum + (r.result?.durationS ?? 0), 0);
  const name = several
    ? `k6-distributed: ${runs.length} scripts`
    : `k6-distributed: ${runs[0]?.script ?? ''}`;
  return junitXml(name, suites, timeS);
}

/** A gated metric's change: `Latency p95: 120.00ms → 150.00ms (+30.00ms (+25.0%))`. */
function deltaCase(d: MetricDelta): JUnitCase {
  const verdict = d.judgement ? `; ${d.judgement.verdict}, interval ${formatDeltaInterval(d)}` : '';
  const text = `${d.source}: ${formatDeltaValue(d, d.base)} → ${formatDeltaValue(d, d.head)} (${formatDelta(d)}${verdict})`;
  return {
    classname: 'k6.comparison',
    name: d.label,
    output: text,
    ...(d.change === 'worse' ? { failure: { type: 'regression', message: `regressed: ${text}` } } : {}),
  };
}

/**
 * A pull request's comparison with its baseline: one case per gated key metric, a regression a
 * failure. Without a judged comparison (no baseline, an expired one, another environment) one
 * skipped case says why.
 * `verdict` is the report's (`passed`, `regressed`, `no-baseline`, …).
 */
export function comparisonSuite({ comparison, verdict }: NonNullable<JUnitRun['compared']>): JUnitSuite {
  // A saturated generator's inconclusive has no gated row; an uncertain one is judged, row by row.
  const judged = verdict === 'passed' || verdict === 'regressed' || verdict === 'inconclusive';
  const gated = judged ? (comparison?.keyMetrics ?? []).filter((d) => d.gated) : [];
  if (gated.length > 0) return { name: 'comparison', cases: gated.map(deltaCase) };
  return {
    name: 'comparison',
    cases: [{ classname: 'k6.comparison', name: 'baseline comparison', skipped: `not judged: ${verdict}` }],
  };
}
