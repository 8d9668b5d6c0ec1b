import { K6_METRIC } from '../../k6/metrics.ts';
import type { HistoryEntry } from '../../result/history-entry.ts';
import { formatMs, formatPercent, formatRate } from '../format.ts';
import { chartPage, escapeHtml as e } from './page.ts';

/**
 * The trend page of the history branch (`index.html` at its root, for GitHub Pages): per key and
 * branch, requests per second and the latency percentiles p50/p90/p95/p99 per commit, oldest
 * first, each percentile's uncertainty band drawn as a shaded band where the result had one
 * (`percentileBands`), and a table of every run with links to its commit and workflow run.
 * Self-contained like the HTML report (src/render/html/report.ts): Chart.js inlined, no network;
 * every text from the branch is escaped and the chart data is embedded as `<script>`-safe JSON.
 */

/** The percentiles the page draws, as `p(N)` keys of a trend. */
const PERCENTILES = ['p(50)', 'p(90)', 'p(95)', 'p(99)'] as const;

/** One run as the page's script reads it. */
interface TrendPoint {
  sha: string;
  run: number;
  at: string;
  rps?: number;
  /** Latency percentiles (ms) and their bands, keyed `p(95)`. */
  latency: Record<string, number>;
  bands: Record<string, [number, number]>;
  errorRate?: number;
  checks?: number;
  verdict: string;
}

/** One chart pair: a key's runs on one branch, oldest first. */
interface TrendSeries {
  id: string;
  key: string;
  branch: string;
  /** The latency metric read: expected responses when every run has it. */
  latencyMetric: string;
  points: TrendPoint[];
}

/** Where the links of the page point. */
export interface TrendPageOptions {
  /** e.g. `https://github.com`. */
  serverUrl: string;
  /** `owner/repo`. */
  repository: string;
  /** The history branch, named in the heading. */
  historyBranch: string;
}

function seriesOf(entries: readonly HistoryEntry[]): TrendSeries[] {
  const groups = new Map<string, HistoryEntry[]>();
  for (const entry of entries) {
    const id = `${entry.key}\u0000${entry.branch}`;
    groups.set(id, [...(groups.get(id) ?? []), entry]);
  }
  return [...groups.values()]
    .map((runs, i) => {
      const sorted = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
      const expected = sorted.every((r) => r.metrics[K6_METRIC.httpReqDurationExpected]);
      const latencyMetric = expected ? K6_METRIC.httpReqDurationExpected : K6_METRIC.httpReqDuration;
      return {
        id: `s${i}`,
        key: sorted[0]!.key,
        branch: sorted[0]!.branch,
        latencyMetric,
        points: sorted.map((r) => pointOf(r, latencyMetric)),
      };
    })
    .sort((a, b) => a.key.localeCompare(b.key) || a.branch.localeCompare(b.branch));
}

function pointOf(entry: HistoryEntry, latencyMetric: string): TrendPoint {
  const trend = entry.metrics[latencyMetric];
  const latency: Record<string, number> = {};
  const bands: Record<string, [number, number]> = {};
  for (const p of PERCENTILES) {
    const v = trend?.values[p] ?? (p === 'p(50)' ? trend?.values.med : undefined);
    if (v !== undefined) latency[p] = v;
    const band = trend?.percentileBands?.[p];
    if (band) bands[p] = band;
  }
  const rps = entry.metrics[K6_METRIC.httpReqs]?.values.rate;
  const errorRate = entry.metrics[K6_METRIC.httpReqFailed]?.values.rate;
  const checks = entry.metrics[K6_METRIC.checks]?.values.rate;
  return {
    sha: entry.sha,
    run: entry.workflowRunId,
    at: entry.startedAt,
    ...(rps === undefined ? {} : { rps }),
    latency,
    bands,
    ...(errorRate === undefined ? {} : { errorRate }),
    ...(checks === undefined ? {} : { checks }),
    verdict: entry.verdict,
  };
}

function runsTable(series: TrendSeries, options: TrendPageOptions): string {
  const repo = `${options.serverUrl}/${options.repository}`;
  const ms = (p: TrendPoint, key: string) => {
    const band = p.bands[key];
    const v = p.latency[key];
    if (v === undefined) return '—';
    return band ? `${formatMs(v)} (${formatMs(band[0])}–${formatMs(band[1])})` : formatMs(v);
  };
  const rows = [...series.points]
    .reverse()
    .map(
      (p) =>
        `<tr data-run="${p.run}">${[
          e(p.at),
          `<a href="${e(`${repo}/commit/${p.sha}`)}"><code>${e(p.sha.slice(0, 7))}</code></a>`,
          `<a href="${e(`${repo}/actions/runs/${p.run}`)}">${p.run}</a>`,
          p.rps === undefined ? '—' : formatRate(p.rps),
          ...PERCENTILES.map((k) => ms(p, k)),
          p.errorRate === undefined ? '—' : formatPercent(p.errorRate),
          p.checks === undefined ? '—' : formatPercent(p.checks),
          e(p.verdict),
        ]
          .map((v) => `<td>${v}</td>`)
          .join('')}</tr>`,
    );
  const head = [
    'started',
    'commit',
    'workflow run',
    'req/s',
    'p50',
    'p90',
    'p95',
    'p99',
    'errors',
    'checks',
    'verdict',
  ];
  return [
    `<details><summary>${series.points.length} runs</summary>`,
    `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead>`,
    `<tbody>${rows.join('\n')}</tbody></table>`,
    '</details>',
  ].join('\n');
}

function seriesSection(series: TrendSeries, options: TrendPageOptions): string {
  return [
    `<section><h2>${e(series.key)} <span class="note">on ${e(series.branch)}</span></h2>`,
    `<figure><figcaption>Requests per second</figcaption><div class="chart"><canvas id="${series.id}-rps"></canvas></div></figure>`,
    `<figure><figcaption>Latency percentiles, ms (<code>${e(series.latencyMetric)}</code>; shaded: the merge's uncertainty band where the run had one)</figcaption><div class="chart"><canvas id="${series.id}-latency"></canvas></div></figure>`,
    runsTable(series, options),
    '</section>',
  ].join('\n');
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#1f2328}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f6f8fa}.note{color:#57606a;font-weight:400}figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}
.chart{position:relative;height:280px}#k6d-chart-error{color:#cf222e;font-weight:600}footer{margin:32px 0 8px;color:#57606a;font-size:12px}
`;

/**
 * The page's script (plain ES2020): for each series of `#k6d-trend` it draws RPS and the latency
 * percentiles on a category axis of short commits; a percentile's band is two datasets filled
 * between. It leaves `data-charts` and `data-painted` on `<body>`, as the HTML report's script does.
 */
const TREND_SCRIPT = `
(function () {
  'use strict';
  var made = [];
  var colors = [[31, 119, 180], [44, 160, 44], [255, 127, 14], [214, 39, 40]];
  function color(i, a) { var c = colors[i % 4]; return 'rgba(' + c[0] + ',' + c[1] + ',' + c[2] + ',' + a + ')'; }
  function chart(id, datasets, labels, unit) {
    var canvas = document.getElementById(id);
    if (!canvas) return;
    made.push(new Chart(canvas, { type: 'line', data: { labels: labels, datasets: datasets },
      options: { animation: false, responsive: true, maintainAspectRatio: false, spanGaps: false,
        plugins: { legend: { labels: { filter: function (item) { return item.text.indexOf('band') < 0; } } } },
        scales: { x: { title: { display: true, text: 'commit (oldest first)' } },
          y: { beginAtZero: true, title: { display: true, text: unit } } } } }));
  }
  function pick(points, f) { return points.map(function (p) { var v = f(p); return v === undefined ? null : v; }); }
  try {
    var data = JSON.parse(document.getElementById('k6d-trend').textContent);
    var keys = ['p(50)', 'p(90)', 'p(95)', 'p(99)'];
    data.series.forEach(function (s) {
      var labels = s.points.map(function (p) { return p.sha.slice(0, 7); });
      chart(s.id + '-rps', [{ label: 'req/s', data: pick(s.points, function (p) { return p.rps; }),
        borderColor: color(0, 1), backgroundColor: color(0, 0.2), pointRadius: 2 }], labels, 'req/s');
      var sets = [];
      keys.forEach(function (k, i) {
        var hasBand = s.points.some(function (p) { return p.bands[k]; });
        if (hasBand) {
          sets.push({ label: k + ' band', data: pick(s.points, function (p) { return p.bands[k] && p.bands[k][1]; }),
            borderColor: 'transparent', backgroundColor: color(i, 0.2), pointRadius: 0, fill: '+1' });
          sets.push({ label: k + ' band low', data: pick(s.points, function (p) { return p.bands[k] && p.bands[k][0]; }),
            borderColor: 'transparent', pointRadius: 0, fill: false });
        }
        sets.push({ label: k, data: pick(s.points, function (p) { return p.latency[k]; }),
          borderColor: color(i, 1), backgroundColor: color(i, 1), pointRadius: 2, fill: false });
      });
      chart(s.id + '-latency', sets, labels, 'ms');
    });
    var painted = 0;
    made.forEach(function (c) {
      var px = c.canvas.getContext('2d').getImageData(0, 0, c.canvas.width, c.canvas.height).data;
      for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) { painted++; break; }
    });
    document.body.setAttribute('data-charts', String(made.length));
    document.body.setAttribute('data-painted', String(painted));
  } catch (error) {
    var box = document.getElementById('k6d-chart-error');
    box.hidden = false;
    box.textContent = 'The charts could not be drawn: ' + error;
    document.body.setAttribute('data-chart-error', String(error));
  }
})();
`;

/** The trend page of every entry of the history branch, as one HTML document. */
export function renderTrendPage(entries: readonly HistoryEntry[], options: TrendPageOptions): string {
  const series = seriesOf(entries);
  const title = `k6 performance history: ${options.repository}`;
  return chartPage({
    title,
    style: STYLE,
    bodyAttributes: `data-series="${series.length}"`,
    parts: [
      `<h1>${e(title)}</h1>`,
      `<p class="note">${entries.length} runs kept in the branch <code>${e(options.historyBranch)}</code>, written by the k6-distributed report action (mode store).</p>`,
      '<p id="k6d-chart-error" hidden></p>',
      series.length === 0 ? '<p>No runs yet.</p>' : '',
      ...series.map((s) => seriesSection(s, options)),
    ],
    data: { id: 'k6d-trend', value: { series } },
    script: TREND_SCRIPT,
  });
}
