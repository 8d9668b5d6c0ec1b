import type { Comparison, MetricDelta } from '../../compare/compare.ts';
import { parseThresholdExpression, percentileKey } from '../../k6/thresholds-parser.ts';
import { saturationWarning } from '../../result/health.ts';
import type { GroupResult, RunResult } from '../../result/schema.ts';
import type { Timeline } from '../../result/timeline-schema.ts';
import { dashboardUrlFor } from '../dashboard.ts';
import { type ChangeCell, changeCell, formatDelta, formatDeltaInterval, formatSide } from '../delta.ts';
import { formatCount, formatMs, formatPercent, formatRate, formatValue } from '../format.ts';
import { keyMetrics } from '../markdown.ts';
import { headlineIntervals, intervalsNote } from '../uncertainty.ts';
import { ZONE_COLUMNS, zoneRows } from '../zones.ts';
import { CLIENT_SCRIPT } from './client.ts';
import { chartPage, escapeHtml } from './page.ts';

/**
 * The self-contained HTML report of one run, written next to the result JSON and uploaded with
 * it: verdict and failures, thresholds, key figures, the run over time (RPS and VUs; p95 band and
 * mean latency; errors and failed checks), latency percentiles, checks, the runners with their
 * start offsets, and the comparison with the baseline for a PR. Charts are drawn by Chart.js,
 * inlined into the file (no network when it is opened; Chart.js is MIT, its licence header stays
 * in the file). Every text that comes from the script or the user (script path, check, metric,
 * threshold, scenario and node names, failure lines) is HTML-escaped; the data for the charts is
 * embedded as JSON with `<` escaped, so no value can end the `<script>` element.
 */

/** What {@link renderHtmlReport} draws. */
export interface HtmlReportInput {
  result: RunResult;
  /** The run over time; default the result's own `timeline` (absent in older results). */
  timeline?: Timeline;
  /** The comparison with the baseline, for a PR. */
  comparison?: Comparison;
  /** Names the baseline in the comparison's heading, e.g. `main @ 1a2b3c4`. */
  baselineLabel?: string;
  /** The page title; default `k6 load test: <script>`. */
  title?: string;
  /** The `dashboard-url` input: a link narrowed to this run (src/render/dashboard.ts). */
  dashboardUrl?: string;
}

function table(head: string[], rows: string[][], numeric: boolean[] = []): string {
  const cell = (tag: string, i: number, v: string) =>
    `<${tag}${numeric[i] ? ' class="num"' : ''}>${v}</${tag}>`;
  return [
    '<table>',
    `<thead><tr>${head.map((h, i) => cell('th', i, h)).join('')}</tr></thead>`,
    `<tbody>${rows.map((r) => `<tr>${r.map((v, i) => cell('td', i, v)).join('')}</tr>`).join('\n')}</tbody>`,
    '</table>',
  ].join('\n');
}

const e = escapeHtml;

function headerSection(result: RunResult, title: string, dashboardUrl: string | undefined): string {
  const env = result.environment;
  const facts = [
    `${env.runners} runner${env.runners === 1 ? '' : 's'} (${e(env.backend)})`,
    `k6 ${e(env.k6Version)}`,
    `${e(result.startedAt)} – ${e(result.endedAt)}`,
    `${result.durationS.toFixed(1)} s`,
    `start skew ${formatMs(result.startSkewMs)}`,
  ];
  const failures =
    result.failures.length > 0
      ? `<ul class="failures">${result.failures.map((f) => `<li>${e(f)}</li>`).join('')}</ul>`
      : '';
  const saturated = saturationWarning(result.loadGenerator);
  return [
    `<header><h1>${e(title)}</h1>`,
    saturated ? `<p class="warn saturated">${e(saturated)}</p>` : '',
    `<p><span class="verdict ${result.verdict}">${result.verdict === 'passed' ? 'PASSED' : 'FAILED'}</span> `,
    `<code>${e(result.script)}</code> · ${facts.join(' · ')}</p>`,
    dashboardUrl
      ? `<p><a href="${e(dashboardUrlFor(dashboardUrl, result))}">Dashboard of this run</a>${result.runId ? ` (run <code>${e(result.runId)}</code>)` : ''}</p>`
      : '',
    `${failures}</header>`,
  ].join('');
}

function thresholdsSection(result: RunResult): string {
  if (result.thresholds.length === 0)
    return '<section><h2>Thresholds</h2><p>The script defines no thresholds.</p></section>';
  const rows = result.thresholds.map((t) => {
    let key = 'value';
    try {
      key = parseThresholdExpression(t.expression, t.metric).valueKey;
    } catch {
      // Judged already; an expression we cannot read again is shown with its plain value.
    }
    const observed =
      t.observed === undefined ? 'no samples' : formatValue(result.metrics[t.metric], key, t.observed);
    return [
      `<code>${e(t.metric)}</code>`,
      `<code>${e(t.expression)}</code>${t.abortOnFail ? ' (abortOnFail)' : ''}`,
      e(observed),
      t.ok ? '<span class="ok">pass</span>' : '<span class="bad">fail</span>',
    ];
  });
  return `<section><h2>Thresholds</h2>${table(['Metric', 'Threshold', 'Observed (global)', 'Result'], rows, [false, false, true, false])}</section>`;
}

function keyFiguresSection(result: RunResult): string {
  const rows = keyMetrics(result).map(([k, v]) => [e(k), e(v)]);
  if (rows.length === 0) return '';
  const intervals = headlineIntervals(result).map(([k, v]) => [e(k), e(v)]);
  const sure =
    intervals.length > 0
      ? `<h3>How sure these figures are</h3>${table(['Figure', 'Value ± interval'], intervals, [false, true])}<p class="note">${e(intervalsNote(result))}</p>`
      : '';
  return `<section><h2>Key figures</h2>${table(['Metric', 'Global value'], rows, [false, true])}${sure}</section>`;
}

function timelineSection(timeline: Timeline | undefined): string {
  if (!timeline || timeline.points.length === 0)
    return '<section><h2>Over time</h2><p>This result has no time series.</p></section>';
  const canvas = (id: string, label: string) =>
    `<figure><figcaption>${label}</figcaption><div class="chart"><canvas id="${id}" role="img" aria-label="${label}"></canvas></div></figure>`;
  const latency = timeline.latency;
  const note = latency
    ? `Every ${timeline.intervalS} s across all runners; latency percentiles every ${latency.intervalS} s, ` +
      `per interval (from the runners' histograms, buckets of ±${(latency.bucketHalfWidth * 100).toFixed(1)}%); ` +
      'the mean latency is per interval and exact.</p>'
    : `Every ${timeline.intervalS} s across all runners. ` +
      'k6 reports percentiles only since the start of the test, so p95 is shown as the band between the ' +
      'fastest and the slowest runner (the global p95 lies inside it); the mean latency is per interval and exact.</p>';
  const others =
    latency?.metrics.filter((m) => m.metric !== 'http_req_duration{expected_response:true}') ?? [];
  return [
    `<section><h2>Over time</h2><p class="note">${note}`,
    canvas('chart-rps', 'Requests per second and active VUs'),
    canvas('chart-latency', latency ? 'Latency per interval (ms)' : 'Latency (ms)'),
    ...(others.length > 0 ? [canvas('chart-latency-trends', 'Threshold trends: p95 per interval')] : []),
    canvas('chart-errors', 'Failed requests and failed checks'),
    '</section>',
  ].join('');
}

/** The latency trend the report reads: expected responses when present. */
function latencyKey(result: RunResult): string {
  const expected = 'http_req_duration{expected_response:true}';
  return result.metrics[expected] ? expected : 'http_req_duration';
}

/** Percentile labels and head values (ms) of the latency trend, in rank order, plus base values from the comparison. */
function percentiles(result: RunResult, comparison: Comparison | undefined) {
  const values = result.metrics[latencyKey(result)]?.values ?? {};
  const ranked: Array<[string, number]> = [];
  if (values.min !== undefined) ranked.push(['min', -1]);
  if (values.med !== undefined) ranked.push(['med', 50]);
  for (const key of Object.keys(values)) {
    const m = /^p\((.+)\)$/.exec(key);
    if (m && key !== 'p(50)') ranked.push([key, Number(m[1])]);
  }
  if (values.max !== undefined) ranked.push(['max', 101]);
  ranked.sort((a, b) => a[1] - b[1]);
  const labels = ranked.map(([k]) => k);
  const head = labels.map((k) => values[k]!);
  let base: Array<number | null> | undefined;
  if (comparison) {
    const byKey = new Map<string, number | undefined>();
    for (const d of comparison.keyMetrics)
      if (/^p\d+$/.test(d.id))
        byKey.set(d.id === 'p50' ? 'med' : percentileKey(Number(d.id.slice(1))), d.base);
    base = labels.map((k) => byKey.get(k) ?? null);
  }
  return { labels, head, base };
}

function percentilesSection(result: RunResult, comparison: Comparison | undefined): string {
  const key = latencyKey(result);
  const p = percentiles(result, comparison);
  if (p.labels.length === 0) return '';
  const rows = p.labels.map((label, i) => [e(label), formatMs(p.head[i]!)]);
  return [
    `<section><h2>Latency percentiles <small><code>${e(key)}</code></small></h2>`,
    '<figure><div class="chart small"><canvas id="chart-percentiles" role="img" aria-label="Latency percentiles"></canvas></div></figure>',
    table(['Statistic', 'Global value'], rows, [false, true]),
    '</section>',
  ].join('');
}

function checkRows(group: GroupResult, out: string[][]): string[][] {
  for (const c of group.checks) {
    const total = c.passes + c.fails;
    const path = c.path.replace(/^::/, '').replaceAll('::', ' › ');
    out.push([
      `<span class="${c.fails === 0 ? 'ok' : 'bad'}">${c.fails === 0 ? '✓' : '✗'}</span> ${e(path)}`,
      formatCount(c.passes),
      formatCount(c.fails),
      formatPercent(total ? c.passes / total : 0),
    ]);
  }
  for (const g of group.groups) checkRows(g, out);
  return out;
}

function checksSection(result: RunResult): string {
  const rows = checkRows(result.rootGroup, []);
  if (rows.length === 0) return '';
  return `<section><h2>Checks</h2>${table(['Check', 'Passes', 'Fails', 'Pass rate'], rows, [false, true, true, true])}</section>`;
}

/** The per-zone table (src/render/zones.ts); '' for a run without zones. */
function zonesSection(result: RunResult): string {
  const rows = zoneRows(result);
  if (rows.length === 0) return '';
  return [
    '<section><h2>Zones</h2>',
    table(
      [...ZONE_COLUMNS],
      rows.map((cells) => cells.map(e)),
      ZONE_COLUMNS.map((_, i) => i > 0),
    ),
    '<p class="note">Each zone merges its own runners; the thresholds and the verdict are the whole run\'s.</p>',
    '</section>',
  ].join('');
}

function runnersSection(result: RunResult): string {
  const opt = (v: number | undefined, f: (n: number) => string) => (v === undefined ? '—' : f(v));
  const rows = result.runners.map((r) => [
    String(r.index),
    `<code>${e(r.segment)}</code>`,
    opt(r.startOffsetMs, formatMs),
    opt(r.durationS, (s) => `${s.toFixed(1)} s`),
    opt(r.requests, formatCount),
    opt(r.rps, formatRate),
    opt(r.p95Ms, formatMs),
    `<span class="${r.ok ? 'ok' : 'bad'}">${e(r.exit)}</span>`,
    r.node ? e(r.node) : '—',
  ]);
  return [
    '<section><h2>Runners</h2>',
    table(
      ['#', 'Segment', 'Start offset', 'Duration', 'Requests', 'req/s', 'p95 (own)', 'Exit', 'Node'],
      rows,
      [true, false, true, true, true, true, true, false, false],
    ),
    '</section>',
  ].join('');
}

/** The CSS class of a change cell's tone (the neutral and missing ones are plain text). */
const CHANGE_CLASS: Partial<Record<ChangeCell['tone'], string>> = {
  better: 'ok',
  worse: 'bad',
  warn: 'warn',
};

/**
 * The change as words with a colour ({@link changeCell}, judged: the HTML report shows a
 * comparison's gate as it is); the Markdown report's emoji need an emoji font the viewer may lack.
 */
function changeHtml(d: MetricDelta): string {
  const { words, tone } = changeCell(d, true);
  const cls = CHANGE_CLASS[tone];
  return cls ? `<span class="${cls}">${words}</span>` : words;
}

function comparisonSection(comparison: Comparison | undefined, baselineLabel: string | undefined): string {
  if (!comparison) return '';
  const judged = comparison.keyMetrics.some((d) => d.judgement);
  // Key metrics with a judgement show each side's interval and the change's (src/compare/significance.ts).
  const row = (d: MetricDelta) => [
    d.id === 'submetric' ? `<code>${e(d.source)}</code>` : e(d.label),
    e(formatSide(d, 'base')),
    e(formatSide(d, 'head')),
    e(formatDelta(d)),
    ...(judged ? [e(formatDeltaInterval(d) || '—')] : []),
    changeHtml(d),
  ];
  const heading = baselineLabel
    ? `Compared with the baseline (${e(baselineLabel)})`
    : 'Compared with the baseline';
  const numeric = judged ? [false, true, true, true, true, false] : [false, true, true, true, false];
  const head = judged
    ? ['Metric', 'Base', 'Head', 'Delta', 'Interval of Delta', 'Verdict']
    : ['Metric', 'Base', 'Head', 'Delta', 'Change'];
  return [
    `<section><h2>${heading}</h2>`,
    table(head, comparison.keyMetrics.map(row), numeric),
    comparison.submetrics.length > 0
      ? `<h3>Submetrics</h3>${table(head, comparison.submetrics.map(row), numeric)}`
      : '',
    '</section>',
  ].join('');
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#1f2328}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0;min-width:50%}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left}
th{background:#f6f8fa}.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-weight:700;padding:2px 8px;border-radius:4px;color:#fff}.verdict.passed{background:#1a7f37}.verdict.failed{background:#cf222e}
.ok{color:#1a7f37}.bad{color:#cf222e;font-weight:600}.warn{color:#9a6700}.failures{color:#cf222e}.note{color:#57606a}
figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}.chart{position:relative;height:280px}.chart.small{height:220px}
#k6d-chart-error{color:#cf222e;font-weight:600}footer{margin:32px 0 8px;color:#57606a;font-size:12px}
`;

/**
 * The report as one HTML document (UTF-8, no external resources).
 * Opening it runs the inlined Chart.js and {@link CLIENT_SCRIPT}; see there for the
 * `data-charts`/`data-painted` attributes it leaves on `<body>`.
 */
export function renderHtmlReport(input: HtmlReportInput): string {
  const { result, comparison } = input;
  const timeline = input.timeline ?? result.timeline;
  const title = input.title ?? `k6 load test: ${result.script}`;
  const data = { timeline, percentiles: percentiles(result, comparison) };
  return chartPage({
    title,
    style: STYLE,
    bodyAttributes: `data-verdict="${result.verdict}"`,
    parts: [
      headerSection(result, title, input.dashboardUrl),
      '<p id="k6d-chart-error" hidden></p>',
      thresholdsSection(result),
      comparisonSection(comparison, input.baselineLabel),
      keyFiguresSection(result),
      timelineSection(timeline),
      percentilesSection(result, comparison),
      checksSection(result),
      zonesSection(result),
      runnersSection(result),
    ],
    data: { id: 'k6d-data', value: data },
    script: CLIENT_SCRIPT,
  });
}
