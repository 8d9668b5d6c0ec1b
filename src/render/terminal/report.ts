import { DEFAULT_SUMMARY_TREND_STATS } from '../../result/build.ts';
import { saturationWarning } from '../../result/health.ts';
import type { MetricResult, RunResult, ThresholdRow } from '../../result/schema.ts';
import { everyCheck, formatCount, formatMs, formatRate } from '../format.ts';
import { headlineIntervals, intervalsNote } from '../uncertainty.ts';
import { ZONE_COLUMNS, zoneRows } from '../zones.ts';
import { humanizeStat, nonTrendColumns, thresholdObserved } from './humanize.ts';
import {
  alignTable,
  columnWidths,
  type Painter,
  padRight,
  painter,
  terminalText,
  visibleWidth,
} from './style.ts';

/**
 * The CLI's report on a terminal: plain text laid out as k6 v2.2.0's end-of-test summary
 * (`internal/js/summary.js`, compact mode), read on the aggregate of every runner: the thresholds
 * first with the values they were judged on, then the checks and the metrics in k6's groups
 * (custom, HTTP, execution, network, browser, web vitals, gRPC, WebSocket) with k6's value columns
 * and its way of writing numbers (./humanize.ts), then the runners and the verdict. Colour (✓ green,
 * ✗ red, values cyan) only when asked: a pipe gets no escape byte. Text from the script (metric and
 * check names, the script's path) is made inert (./style.ts `terminalText`). Pure.
 */

/** Options of {@link renderTerminalReport}. */
export interface TerminalReportOptions {
  /** ANSI colours (see `wantsColor` in ./style.ts for when the CLI asks for them). */
  color: boolean;
}

const INDENT = '    ';
const MARK = { pass: '✓', fail: '✗' } as const;

/** k6's metric groups in its order (`internal/output/summary/data.go`; custom metrics come first). */
const GROUPS: ReadonlyArray<{ title: string; holds: (name: string) => boolean }> = [
  {
    title: 'HTTP',
    holds: (n) =>
      /^http_req(s|_failed|_duration|_blocked|_connecting|_tls_handshaking|_sending|_waiting|_receiving)/.test(
        n,
      ),
  },
  {
    title: 'EXECUTION',
    holds: (n) => /^(vus|vus_max|iterations|iteration_duration|dropped_iterations)/.test(n),
  },
  { title: 'NETWORK', holds: (n) => /^(data_sent|data_received)/.test(n) },
  { title: 'WEB_VITALS', holds: (n) => n.startsWith('browser_web_vital_') },
  { title: 'BROWSER', holds: (n) => n.startsWith('browser_') },
  { title: 'GRPC', holds: (n) => n.startsWith('grpc_') },
  { title: 'WEBSOCKET', holds: (n) => n.startsWith('ws_') },
];

/** Metrics k6's compact summary leaves out (`isSkippedMetric`): checks have their own lines. */
const SKIPPED =
  /^(checks|group_duration|http_req_blocked|http_req_connecting|http_req_receiving|http_req_sending|http_req_tls_handshaking|http_req_waiting)/;

/** Metric names sorted as k6 sorts them: by parent, each submetric right after its parent. */
function sortByName(names: string[]): string[] {
  const parent = (n: string) => n.split('{', 1)[0]!;
  return names.sort((a, b) => parent(a).localeCompare(parent(b)) || a.localeCompare(b));
}

/** A submetric as k6 shows it under its parent: `  { expected_response:true }`. */
function displayName(name: string): string {
  const brace = name.indexOf('{');
  return terminalText(brace < 0 ? name : `  { ${name.slice(brace + 1, -1)} }`);
}

function title(text: string, p: Painter): string {
  return `  █ ${p.paint(text, 'bold')}`;
}

/** What the threshold was judged on, as k6 writes it: `p(95)=3.09ms`, `rate=50.00%`, `count=20`. */
function observedText(result: RunResult, t: ThresholdRow, p: Painter): string {
  const seen = thresholdObserved(result, t);
  const band = seen.band ? ` (limit inside the merge's band ${seen.band}: could go either way)` : '';
  return `${terminalText(seen.method)}=${p.paint(seen.value, 'cyan')}${band}`;
}

/** The thresholds section, one block per metric: `✓ 'p(95)<500' p(95)=3.09ms`. */
function thresholdLines(result: RunResult, p: Painter): string[] {
  const byMetric = new Map<string, ThresholdRow[]>();
  for (const t of result.thresholds) byMetric.set(t.metric, [...(byMetric.get(t.metric) ?? []), t]);
  const lines: string[] = [];
  for (const name of sortByName([...byMetric.keys()])) {
    const parent = name.split('{', 1)[0]!;
    const nested = parent !== name && byMetric.has(parent);
    const indent = nested ? `${INDENT}  ` : INDENT;
    lines.push('', indent + terminalText(nested ? name.slice(parent.length) : name));
    for (const t of byMetric.get(name)!) {
      const mark = t.ok ? p.paint(MARK.pass, 'green') : p.paint(MARK.fail, 'red');
      lines.push(`${indent}${mark} '${terminalText(t.expression)}' ${observedText(result, t, p)}`);
    }
  }
  return lines;
}

/** `name......: value extra…`, the dots running to `width` plus three (k6's `renderMetricLine`). */
function dotted(name: string, width: number, p: Painter): string {
  return `${INDENT}${name}${p.paint(`${'.'.repeat(Math.max(3, width - visibleWidth(name) + 3))}:`, 'faint')}`;
}

/** Columns padded to the widest of each position, values in cyan. */
function columns(rows: string[][], p: Painter): string[] {
  const widths = columnWidths(rows);
  return rows.map((row) => row.map((c, i) => padRight(p.paint(c, 'cyan'), widths[i]!)).join(' '));
}

/** The checks' totals (`checks_total`, `checks_succeeded`, `checks_failed`) and each check. */
function checkLines(result: RunResult, p: Painter): string[] {
  const checks = everyCheck(result.rootGroup);
  const rate = result.metrics.checks;
  if (checks.length === 0 && !rate) return [];
  const passes = rate?.values.passes ?? checks.reduce((s, c) => s + c.passes, 0);
  const fails = rate?.values.fails ?? checks.reduce((s, c) => s + c.fails, 0);
  const total = passes + fails;
  const share = (n: number) => `${(Math.trunc((total ? n / total : 0) * 10000) / 100).toFixed(2)}%`;
  const names = ['checks_total', 'checks_succeeded', 'checks_failed'];
  const values = columns(
    [
      [String(total), `${Number.parseFloat((result.durationS ? total / result.durationS : 0).toFixed(6))}/s`],
      [share(passes), `${passes} out of ${total}`],
      [share(fails), `${fails} out of ${total}`],
    ],
    p,
  );
  const lines = names.map((n, i) => `${dotted(n, 16, p)} ${values[i]!}`.trimEnd());
  lines.push('');
  for (const c of checks) {
    if (c.fails === 0) {
      lines.push(`${INDENT}${p.paint(`${MARK.pass} ${terminalText(c.path)}`, 'green')}`);
      continue;
    }
    const percent = Math.floor((100 * c.passes) / (c.passes + c.fails));
    lines.push(`${INDENT}${p.paint(`${MARK.fail} ${terminalText(c.path)}`, 'red')}`);
    lines.push(
      `${INDENT}  ${p.paint(`↳  ${percent}% — ${MARK.pass} ${c.passes} / ${MARK.fail} ${c.fails}`, 'red')}`,
    );
  }
  return lines;
}

/** A trend's value: the summary data's (exactly the script's `summaryTrendStats`), else the result's. */
function trendValue(result: RunResult, name: string, stat: string): number | undefined {
  return result.summary?.metrics[name]?.values[stat] ?? result.metrics[name]?.values[stat];
}

/** The metrics in k6's groups, names dotted to one width (at least `minWidth`), each kind's columns aligned. */
function metricLines(result: RunResult, p: Painter, minWidth = 0): string[] {
  const names = sortByName(Object.keys(result.metrics).filter((n) => !SKIPPED.test(n)));
  if (names.length === 0) return [];
  const width = Math.max(minWidth, ...names.map((n) => visibleWidth(displayName(n))));
  const stats = result.summary?.options.summaryTrendStats ?? [...DEFAULT_SUMMARY_TREND_STATS];
  const unit = result.summary?.options.summaryTimeUnit ?? '';
  const cells = (name: string, metric: MetricResult) =>
    metric.type === 'trend'
      ? stats.map((s) => {
          const v = trendValue(result, name, s);
          return `${s}=${v === undefined ? '-' : humanizeStat(s, v, metric, unit)}`;
        })
      : nonTrendColumns(metric, unit);
  const trends = names.filter((n) => result.metrics[n]!.type === 'trend');
  const others = names.filter((n) => result.metrics[n]!.type !== 'trend');
  const data = new Map<string, string>();
  for (const group of [trends, others]) {
    const rows = columns(
      group.map((n) => cells(n, result.metrics[n]!)),
      p,
    );
    for (const [i, n] of group.entries()) data.set(n, rows[i]!.trimEnd());
  }
  const lines: string[] = [];
  const custom = names.filter((n) => !GROUPS.some((g) => g.holds(n)));
  const sections = [
    { title: 'CUSTOM', names: custom },
    ...GROUPS.map((g) => ({
      title: g.title,
      names: names.filter((n) => GROUPS.find((h) => h.holds(n)) === g),
    })),
  ];
  for (const section of sections) {
    if (section.names.length === 0) continue;
    lines.push('', `${INDENT}${p.paint(section.title, 'bold')}`);
    for (const n of section.names) lines.push(`${dotted(displayName(n), width, p)} ${data.get(n)!}`);
  }
  return lines;
}

/** The runners as an aligned table: segment, node, requests, RPS, own p95, start offset, exit. */
function runnerLines(result: RunResult, p: Painter): string[] {
  const withNode = result.runners.some((r) => r.node);
  const withZone = result.runners.some((r) => r.zone);
  const header = [
    'runner',
    ...(withZone ? ['zone'] : []),
    'segment',
    ...(withNode ? ['node'] : []),
    'requests',
    'rps',
    'p95 (own slice)',
    'start offset',
    'exit',
  ];
  const rows = result.runners.map((r) => [
    String(r.index),
    ...(withZone ? [r.zone ? terminalText(r.zone) : '-'] : []),
    terminalText(r.segment),
    ...(withNode ? [r.node ? terminalText(r.node) : '-'] : []),
    r.requests === undefined ? '-' : formatCount(r.requests),
    r.rps === undefined ? '-' : formatRate(r.rps),
    r.p95Ms === undefined ? '-' : formatMs(r.p95Ms),
    r.startOffsetMs === undefined ? '-' : `+${formatMs(r.startOffsetMs)}`,
    `${r.ok ? p.paint(MARK.pass, 'green') : p.paint(MARK.fail, 'red')} ${terminalText(r.exit)}`,
  ]);
  const right = header.map((h) => !['zone', 'segment', 'node', 'exit'].includes(h));
  const [head, ...body] = alignTable([header, ...rows], right);
  return [
    '',
    INDENT + p.paint(head!, 'bold'),
    ...body.map((l) => INDENT + l),
    '',
    `${INDENT}Per-runner p95 is for diagnosis only: global percentiles are merged from every runner's quantiles, never averaged.`,
  ];
}

/** The verdict and each reason for a failed one. */
function verdictLines(result: RunResult, p: Painter): string[] {
  const passed = result.verdict === 'passed';
  const head = passed
    ? p.paint(`${MARK.pass} passed`, 'green', 'bold')
    : p.paint(`${MARK.fail} failed`, 'red', 'bold');
  const kinds = result.failureKinds?.length ? ` (${result.failureKinds.join(', ')})` : '';
  return [
    '',
    `${INDENT}${head}${passed ? '' : kinds}`,
    ...result.failures.map((f) => `${INDENT}  ${p.paint(`↳ ${terminalText(f)}`, 'red')}`),
  ];
}

/** The whole report, ending with a newline. */
export function renderTerminalReport(result: RunResult, options: TerminalReportOptions): string {
  const p = painter(options.color);
  const env = result.environment;
  const runners = `${env.runners} runner${env.runners === 1 ? '' : 's'} (${env.backend})`;
  const lines = [
    title(`k6 distributed run: ${terminalText(result.script)}`, p),
    '',
    `${INDENT}${[runners, `k6 ${terminalText(env.k6Version)}`, `${result.durationS.toFixed(1)}s`, `start skew ${formatMs(result.startSkewMs)}`, ...(result.runId ? [`run ${terminalText(result.runId)}`] : [])].join(' · ')}`,
    '',
  ];
  const saturated = saturationWarning(result.loadGenerator);
  if (saturated) lines.splice(1, 0, '', `${INDENT}${p.paint(terminalText(saturated), 'yellow')}`);
  lines.push(title('THRESHOLDS (judged on the aggregate of all runners)', p));
  if (result.thresholds.length === 0) lines.push('', `${INDENT}The script defines no thresholds.`);
  else lines.push(...thresholdLines(result, p));
  lines.push('', '', title('TOTAL RESULTS', p), '', ...checkLines(result, p));
  // The interval lines' dots end in the metrics' column, as every dotted line of k6's summary does.
  const intervals = headlineIntervals(result).map(([k, v]) => [terminalText(k), v] as const);
  const width = Math.max(0, ...intervals.map(([k]) => visibleWidth(k)));
  const metrics = metricLines(result, p, width);
  lines.push(...(metrics.length ? metrics : ['', `${INDENT}No metrics were collected.`]));
  if (intervals.length > 0) {
    const names = Object.keys(result.metrics).filter((n) => !SKIPPED.test(n));
    const metricWidth = Math.max(width, ...names.map((n) => visibleWidth(displayName(n))));
    lines.push('', '', title('HOW SURE (in-run confidence intervals)', p), '');
    for (const [k, v] of intervals) lines.push(`${dotted(k, metricWidth, p)} ${v}`);
    lines.push('', `${INDENT}${intervalsNote(result)}`);
  }
  const zones = zoneRows(result);
  if (zones.length > 0) {
    const [head, ...body] = alignTable(
      [ZONE_COLUMNS.map((c) => c.toLowerCase()), ...zones.map((r) => r.map(terminalText))],
      ZONE_COLUMNS.map((_, i) => i > 0),
    );
    lines.push(
      '',
      '',
      title('ZONES', p),
      '',
      INDENT + p.paint(head!, 'bold'),
      ...body.map((l) => INDENT + l),
    );
  }
  lines.push(
    '',
    '',
    title(`RUNNERS (start skew ${formatMs(result.startSkewMs)})`, p),
    ...runnerLines(result, p),
  );
  lines.push('', '', title('VERDICT', p), ...verdictLines(result, p));
  return `${lines.map((l) => l.trimEnd()).join('\n')}\n`;
}
