import type { ToleranceUnit } from '../compare/judgement.ts';
import type { Timeline, TimelinePoint } from '../result/timeline-schema.ts';
import { escapeMarkdown, formatPercent } from './format.ts';

/**
 * Compact charts for the job summary and the PR comment, as Mermaid `xychart-beta` blocks that
 * GitHub renders in Markdown (the diagram type exists since Mermaid 10.3; only its 10.3 syntax is
 * used here: an init directive for the colours, `title`, `x-axis` categories or range, `y-axis`
 * title and range, `line`). An xychart has one y-axis and no legend, so RPS and latency are two
 * charts and every line is named in the title.
 * When a chart would not fit (`maxChars`) or has fewer than 2 points, a Markdown table is written
 * instead. GitHub's limits: a comment body is at most 65,536 characters, Mermaid's own default
 * `maxTextSize` is 50,000 per diagram.
 */

/** Size limits of {@link timelineMarkdown} and {@link trendMarkdown}. */
export interface ChartLimits {
  /** At most this many points per line; longer series are merged into buckets. */
  maxPoints: number;
  /** The whole Markdown (all charts) at most this long, characters; else the table fallback. */
  maxChars: number;
  /** At most this many rows in a fallback table. */
  maxTableRows: number;
}

/** Defaults: 60 points, 6,000 characters, 24 table rows: a small part of a comment. */
export const DEFAULT_CHART_LIMITS: ChartLimits = { maxPoints: 60, maxChars: 6000, maxTableRows: 24 };

/** A label safe inside a Mermaid double-quoted string (no quotes, no entity codes, one line). */
export function mermaidLabel(text: string): string {
  return text
    .replace(/[^\p{L}\p{N} .,:/()+\-_%–]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function num(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/**
 * Line colours, set with an init directive (Mermaid 10+): the default theme's first colour is a
 * very light lilac that hardly shows on white. Mid-tone colours read on GitHub's light and dark themes.
 */
const DEFAULT_PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e'];

function paletteDirective(colors: readonly string[]): string {
  return `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${colors.join(', ')}"}}}}%%`;
}

/**
 * One `xychart-beta` diagram (without the code fence). The x-axis is either category labels
 * (`categories`) or a numeric range (`range`: the lines' points are spread evenly over it, so use
 * it for equally spaced points).
 */
export function xyChart(chart: {
  title: string;
  xLabel: string;
  categories?: string[];
  range?: { from: number; to: number };
  yLabel: string;
  lines: number[][];
  /** One colour per line, `#rrggbb`. */
  palette?: readonly string[];
}): string {
  const all = chart.lines.flat();
  const max = Math.max(...all);
  const min = Math.min(...all);
  // Start the axis at 0 unless the values sit far from it (then their movement would be flattened).
  const low = min > 0 && min > 0.5 * max ? Math.floor(min * 0.9) : 0;
  const high = max > low ? max * 1.05 : low + 1;
  const xAxis = chart.range
    ? `${num(chart.range.from)} --> ${num(chart.range.to)}`
    : `[${(chart.categories ?? []).map((c) => `"${mermaidLabel(c)}"`).join(', ')}]`;
  return [
    paletteDirective((chart.palette ?? DEFAULT_PALETTE).filter((c) => /^#[0-9a-f]{6}$/i.test(c))),
    'xychart-beta',
    `  title "${mermaidLabel(chart.title)}"`,
    `  x-axis "${mermaidLabel(chart.xLabel)}" ${xAxis}`,
    `  y-axis "${mermaidLabel(chart.yLabel)}" ${num(low)} --> ${num(high)}`,
    ...chart.lines.map((line) => `  line [${line.map(num).join(', ')}]`),
  ].join('\n');
}

function fence(diagram: string): string {
  return `\`\`\`mermaid\n${diagram}\n\`\`\``;
}

/**
 * Merges consecutive points into at most `maxPoints` buckets: requests, RPS and error rate over the
 * bucket, VUs and the p95-since-start band of its last point, mean latency weighted by requests.
 */
export function downsample(points: readonly TimelinePoint[], maxPoints: number): TimelinePoint[] {
  if (points.length <= maxPoints) return [...points];
  const size = Math.ceil(points.length / maxPoints);
  const out: TimelinePoint[] = [];
  for (let i = 0; i < points.length; i += size) {
    const bucket = points.slice(i, i + size);
    const last = bucket.at(-1)!;
    const requests = bucket.reduce((a, p) => a + p.requests, 0);
    const intervalS = bucket.reduce((a, p) => a + p.intervalS, 0);
    const failed = bucket.reduce((a, p) => a + p.errorRate * p.requests, 0);
    const latencySum = bucket.reduce((a, p) => a + (p.avgMs ?? 0) * p.requests, 0);
    const merged: TimelinePoint = {
      ...last,
      intervalS,
      requests,
      rps: requests / intervalS,
      errorRate: requests > 0 ? failed / requests : 0,
    };
    if (bucket.some((p) => p.checksFailed !== undefined))
      merged.checksFailed = bucket.reduce((a, p) => a + (p.checksFailed ?? 0), 0);
    if (requests > 0) merged.avgMs = latencySum / requests;
    else delete merged.avgMs;
    out.push(merged);
  }
  return out;
}

function timeLabel(tS: number): string {
  return tS >= 120 ? `${num(tS / 60)}m` : `${Math.round(tS)}s`;
}

/** The x-axis of a time chart: seconds, or minutes for runs of 5 minutes and more. */
function timeAxis(points: readonly TimelinePoint[]): { xLabel: string; range: { from: number; to: number } } {
  const minutes = points.at(-1)!.tS >= 300;
  const unit = minutes ? 60 : 1;
  return {
    xLabel: minutes ? 'minutes since start' : 'seconds since start',
    range: { from: points[0]!.tS / unit, to: points.at(-1)!.tS / unit },
  };
}

/**
 * The RPS chart and the p95 chart of a series (Mermaid sources, no fences); none for under 2 points.
 * Points are drawn evenly spaced over the run's time (they are, but for a shorter last interval).
 */
export function timelineCharts(timeline: Timeline, maxPoints = DEFAULT_CHART_LIMITS.maxPoints): string[] {
  const points = downsample(timeline.points, maxPoints);
  if (points.length < 2) return [];
  const charts = [
    xyChart({
      title: `Requests per second (every ${num(points[0]!.intervalS)} s)`,
      ...timeAxis(points),
      yLabel: 'req/s',
      lines: [points.map((p) => p.rps)],
    }),
  ];
  const perInterval = latencyChart(timeline, maxPoints);
  const latency = points.filter((p) => p.p95MaxMs !== undefined);
  if (perInterval) charts.push(perInterval);
  else if (latency.length >= 2) {
    const band = latency.some((p) => p.p95MinMs !== p.p95MaxMs);
    charts.push(
      xyChart({
        title: band
          ? 'p95 latency since start (ms): upper and lower line = slowest and fastest runner'
          : 'p95 latency since start (ms)',
        ...timeAxis(latency),
        yLabel: 'ms',
        lines: band
          ? [latency.map((p) => p.p95MaxMs!), latency.map((p) => p.p95MinMs!)]
          : [latency.map((p) => p.p95MaxMs!)],
      }),
    );
  }
  return charts;
}

/**
 * The chart of latency per interval (p95 above, p50 below) from `timeline.latency`, or undefined
 * without it. Over `maxPoints` intervals, consecutive ones merge into one point: the highest p95 and
 * the highest p50 of them (a spike stays visible), and the title says so.
 */
export function latencyChart(
  timeline: Timeline,
  maxPoints = DEFAULT_CHART_LIMITS.maxPoints,
): string | undefined {
  const main = timeline.latency?.metrics.find(
    (m) => m.metric === 'http_req_duration{expected_response:true}',
  );
  const points = main?.points.filter((p) => p.p95 !== undefined) ?? [];
  if (points.length < 2) return undefined;
  const size = Math.ceil(points.length / maxPoints);
  const merged: Array<{ tS: number; p95: number; p50: number }> = [];
  for (let i = 0; i < points.length; i += size) {
    const bucket = points.slice(i, i + size);
    merged.push({
      tS: bucket.at(-1)!.tS,
      p95: Math.max(...bucket.map((p) => p.p95!)),
      p50: Math.max(...bucket.map((p) => p.p50!)),
    });
  }
  const every = num(timeline.latency!.intervalS * size);
  const minutes = merged.at(-1)!.tS >= 300;
  const unit = minutes ? 60 : 1;
  return xyChart({
    title:
      size === 1
        ? `Latency per ${every} s (ms): p95 (upper line) and p50`
        : `Latency per ${every} s (ms): highest p95 (upper line) and p50 of each ${every} s`,
    xLabel: minutes ? 'minutes since start' : 'seconds since start',
    range: { from: merged[0]!.tS / unit, to: merged.at(-1)!.tS / unit },
    yLabel: 'ms',
    lines: [merged.map((p) => p.p95), merged.map((p) => p.p50)],
  });
}

/** The fallback: one row per (merged) point. */
export function timelineTable(timeline: Timeline, maxRows = DEFAULT_CHART_LIMITS.maxTableRows): string {
  const points = downsample(timeline.points, maxRows);
  const p95 = (p: TimelinePoint) =>
    p.p95MaxMs === undefined
      ? '—'
      : p.p95MinMs === p.p95MaxMs
        ? num(p.p95MaxMs)
        : `${num(p.p95MinMs!)}–${num(p.p95MaxMs)}`;
  return [
    '| time since start | req/s | VUs | errors | p95 since start (ms) |',
    '|---:|---:|---:|---:|---:|',
    ...points.map(
      (p) => `| ${timeLabel(p.tS)} | ${num(p.rps)} | ${p.vus} | ${formatPercent(p.errorRate)} | ${p95(p)} |`,
    ),
  ].join('\n');
}

/**
 * The run over time for the job summary or the PR comment: two Mermaid charts (RPS; p95 since
 * start) or, when they would exceed `maxChars` or the series has under 2 points, a table (with
 * fewer, merged rows until it fits). Returns '' for an empty series or when nothing fits.
 */
export function timelineMarkdown(timeline: Timeline, limits: Partial<ChartLimits> = {}): string {
  const l = { ...DEFAULT_CHART_LIMITS, ...limits };
  if (timeline.points.length === 0) return '';
  const charts = timelineCharts(timeline, l.maxPoints).map(fence).join('\n\n');
  if (charts && charts.length <= l.maxChars) return charts;
  // Fewer, wider rows until the table fits.
  for (let rows = l.maxTableRows; rows >= 2; rows = Math.floor(rows / 2)) {
    const table = timelineTable(timeline, rows);
    if (table.length <= l.maxChars) return table;
  }
  return '';
}

/** One metric's values across the base branch's runs, for {@link trendMarkdown}. */
export interface Trend {
  /** The metric as shown, e.g. `p95`. */
  metric: string;
  /** Unit of the values: ms, `pp` (values are fractions, shown as %), or `/s`. */
  unit: ToleranceUnit;
  /** Oldest first: one entry per base-branch run, labelled by its short commit SHA. */
  history: Array<{ label: string; value: number }>;
  /** This PR's value, labelled e.g. `PR 42`. */
  head: { label: string; value: number };
  /** The history's normal range (see `normalRange`), drawn as two flat lines. */
  range?: { low: number; high: number };
  /** Base-branch runs left out because their result artifact was missing or expired. */
  skipped?: number;
}

function inUnit(value: number, unit: ToleranceUnit): number {
  return unit === 'pp' ? value * 100 : value;
}

const UNIT_LABEL: Record<ToleranceUnit, string> = { ms: 'ms', pp: '%', '/s': 'req/s' };

/**
 * A small trend of one gated metric across the base branch's commits with this PR's value as the
 * last point (its label names it), and the normal range as two flat lines; a one-line table when
 * the chart would exceed `maxChars` or there is no history; followed by a note of the skipped runs.
 */
export function trendMarkdown(trend: Trend, limits: Partial<ChartLimits> = {}): string {
  const skipped = trend.skipped
    ? `\n\n_${trend.skipped} base run${trend.skipped === 1 ? '' : 's'} skipped: result artifact missing or expired._`
    : '';
  return trendBody(trend, limits) + skipped;
}

function trendBody(trend: Trend, limits: Partial<ChartLimits>): string {
  const l = { ...DEFAULT_CHART_LIMITS, ...limits };
  const history = trend.history.slice(-Math.max(1, l.maxPoints - 1));
  const values = [...history.map((h) => h.value), trend.head.value].map((v) => inUnit(v, trend.unit));
  const unit = UNIT_LABEL[trend.unit];
  if (history.length > 0) {
    const lines = [values];
    if (trend.range) {
      lines.push(values.map(() => Math.max(0, inUnit(trend.range!.low, trend.unit))));
      lines.push(values.map(() => inUnit(trend.range!.high, trend.unit)));
    }
    const chart = fence(
      xyChart({
        title: `${trend.metric} (${unit}) over the last ${history.length} base runs, last point ${trend.head.label}${
          trend.range ? ', flat lines: normal range' : ''
        }`,
        xLabel: 'commit',
        categories: [...history.map((h) => h.label), trend.head.label],
        yLabel: unit,
        lines,
        // The values in blue, both bounds of the normal range in the same grey.
        palette: ['#1f77b4', '#8c8c8c', '#8c8c8c'],
      }),
    );
    if (chart.length <= l.maxChars) return chart;
  }
  const labels = [...history.map((h) => escapeMarkdown(h.label)), `**${escapeMarkdown(trend.head.label)}**`];
  return [
    `| ${escapeMarkdown(trend.metric)} (${unit}) | ${labels.join(' | ')} |`,
    `|---|${labels.map(() => '---:').join('|')}|`,
    `| | ${values.map(num).join(' | ')} |`,
  ].join('\n');
}
