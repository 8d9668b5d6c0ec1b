import { K6_METRIC } from '../k6/metrics.ts';
import { percentileKey } from '../k6/thresholds-parser.ts';
import { saturationWarning } from '../result/health.ts';
import type { MetricResult, RunResult } from '../result/schema.ts';
import { timelineMarkdown } from './chart.ts';
import { dashboardMarkdown } from './dashboard.ts';
import {
  escapeMarkdown,
  everyCheck,
  formatBytes,
  formatCount,
  formatMs,
  formatPercent,
  formatRate,
  formatValue,
  inlineCode,
} from './format.ts';
import { headlineIntervals, intervalsNote } from './uncertainty.ts';
import { renderZones, ZONES_NOTE } from './zones.ts';

/**
 * The markdown report of one run: verdict, thresholds with observed values, key metrics, checks,
 * runners and start skew. The CLI prints it, the `run` action writes it to the job summary, and
 * the `report` action builds its PR comment from the same sections.
 */

/** `✅ passed` / `❌ failed`. */
export function verdictBadge(verdict: RunResult['verdict']): string {
  return verdict === 'passed' ? '✅ passed' : '❌ failed';
}

/** The one-line header: verdict, script, runners, backend, k6 version, duration, start skew. */
export function renderHeadline(result: RunResult): string {
  const env = result.environment;
  return [
    `**${verdictBadge(result.verdict)}** · ${inlineCode(result.script)}`,
    `${env.runners} runner${env.runners === 1 ? '' : 's'} (${env.backend})`,
    `k6 ${escapeMarkdown(env.k6Version)}`,
    `${result.durationS.toFixed(1)}s`,
    `start skew ${formatMs(result.startSkewMs)}`,
  ].join(' · ');
}

/** The reasons for a failed verdict, as a bullet list ('' when passed). */
export function renderFailures(result: RunResult): string {
  if (result.failures.length === 0) return '';
  return result.failures.map((f) => `- ${escapeMarkdown(f)}`).join('\n');
}

/** The thresholds table: metric, expression, observed value on the aggregate, result. */
export function renderThresholds(result: RunResult): string {
  if (result.thresholds.length === 0) return '_The script defines no thresholds._';
  const rows = result.thresholds.map((t) => {
    const metric = result.metrics[t.metric];
    const key = thresholdValueKey(t.expression);
    const observed = t.observed === undefined ? 'no samples' : formatValue(metric, key, t.observed);
    const note =
      t.uncertain && t.band
        ? ` (limit inside the merge's band ${formatValue(metric, key, t.band[0])}–${formatValue(metric, key, t.band[1])}: could go either way)`
        : '';
    return `| ${inlineCode(t.metric)} | ${inlineCode(t.expression)} | ${observed} | ${t.ok ? '✅ pass' : '❌ fail'}${note} |`;
  });
  return ['| Metric | Threshold | Observed (global) | Result |', '|---|---|---:|---|', ...rows].join('\n');
}

function thresholdValueKey(expression: string): string {
  const method = expression.split(/<|>|=|!/)[0]!.trim();
  const p = /^p\((.*)\)$/.exec(method);
  return p ? percentileKey(Number(p[1])) : method;
}

/** Key numbers a reader looks for first, as `[label, value]` pairs (missing metrics are left out). */
export function keyMetrics(result: RunResult): Array<[string, string]> {
  const m = result.metrics;
  const rows: Array<[string, string]> = [];
  const reqs = m[K6_METRIC.httpReqs];
  if (reqs)
    rows.push([
      'HTTP requests',
      `${formatCount(reqs.values.count ?? 0)} (${formatRate(reqs.values.rate ?? 0)})`,
    ]);
  const duration = m[K6_METRIC.httpReqDurationExpected] ?? m[K6_METRIC.httpReqDuration];
  if (duration) {
    const v = duration.values;
    const name = m[K6_METRIC.httpReqDurationExpected]
      ? `${K6_METRIC.httpReqDuration} (expected responses)`
      : K6_METRIC.httpReqDuration;
    rows.push([
      `${name} p50 / p90 / p95 / p99`,
      [50, 90, 95, 99].map((p) => formatMs(v[percentileKey(p)] ?? 0)).join(' / '),
    ]);
    rows.push([`${name} avg / max`, `${formatMs(v.avg ?? 0)} / ${formatMs(v.max ?? 0)}`]);
  }
  const failed = m[K6_METRIC.httpReqFailed];
  if (failed) {
    rows.push([
      'Error rate (http_req_failed)',
      `${formatPercent(failed.values.rate ?? 0)} (${formatCount(failed.values.passes ?? 0)} of ${formatCount((failed.values.passes ?? 0) + (failed.values.fails ?? 0))})`,
    ]);
  }
  const checks = m.checks;
  if (checks) {
    const total = (checks.values.passes ?? 0) + (checks.values.fails ?? 0);
    rows.push([
      'Checks passed',
      `${formatPercent(checks.values.rate ?? 0)} (${formatCount(checks.values.passes ?? 0)} of ${formatCount(total)})`,
    ]);
  }
  const iterations = m.iterations;
  if (iterations) {
    rows.push([
      'Iterations',
      `${formatCount(iterations.values.count ?? 0)} (${formatRate(iterations.values.rate ?? 0)})`,
    ]);
  }
  const received = m.data_received;
  const sent = m.data_sent;
  if (received || sent) {
    const fmt = (d: MetricResult | undefined) =>
      d ? `${formatBytes(d.values.count ?? 0)} (${formatBytes(d.values.rate ?? 0)}/s)` : '—';
    rows.push(['Data received / sent', `${fmt(received)} / ${fmt(sent)}`]);
  }
  const vusMax = m.vus_max;
  if (vusMax) rows.push(['VUs (max)', formatCount(vusMax.values.max ?? vusMax.values.value ?? 0)]);
  return rows;
}

/** The key metrics as a two-column table. */
export function renderKeyMetrics(result: RunResult): string {
  const rows = keyMetrics(result);
  if (rows.length === 0) return '_No metrics were collected._';
  return ['| Metric | Global value |', '|---|---:|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

/** The headline figures with their in-run confidence intervals and a note on the method; '' without them. */
export function renderIntervals(result: RunResult): string {
  const rows = headlineIntervals(result);
  if (rows.length === 0) return '';
  return [
    '| Figure | Value ± interval |',
    '|---|---:|',
    ...rows.map(([k, v]) => `| ${escapeMarkdown(k)} | ${v} |`),
    '',
    `_${intervalsNote(result)}_`,
  ].join('\n');
}

/** Every check across groups with its global passes and fails ('' when the script has none). */
export function renderChecks(result: RunResult): string {
  const checks = everyCheck(result.rootGroup);
  if (checks.length === 0) return '';
  const rows = checks.map((c) => {
    const total = c.passes + c.fails;
    const mark = c.fails === 0 ? '✅' : '❌';
    return `| ${mark} ${escapeMarkdown(c.path)} | ${formatCount(c.passes)} | ${formatCount(c.fails)} | ${formatPercent(total ? c.passes / total : 0)} |`;
  });
  return ['| Check | Passes | Fails | Pass rate |', '|---|---:|---:|---:|', ...rows].join('\n');
}

/** The per-runner table: segment, (node), requests, RPS, its own p95, exit, start offset. */
export function renderRunners(result: RunResult): string {
  const withNode = result.runners.some((r) => r.node);
  const withZone = result.runners.some((r) => r.zone);
  const rows = result.runners.map(
    (r) =>
      `${[
        `| ${r.index}`,
        ...(withZone ? [r.zone ? escapeMarkdown(r.zone) : '—'] : []),
        inlineCode(r.segment),
        ...(withNode ? [r.node ? inlineCode(r.node) : '—'] : []),
        r.requests === undefined ? '—' : formatCount(r.requests),
        r.rps === undefined ? '—' : formatRate(r.rps),
        r.p95Ms === undefined ? '—' : formatMs(r.p95Ms),
        `${r.ok ? '✅' : '❌'} ${escapeMarkdown(r.exit)}`,
        r.startOffsetMs === undefined ? '—' : `+${formatMs(r.startOffsetMs)}`,
      ].join(' | ')} |`,
  );
  return [
    `| Runner |${withZone ? ' Zone |' : ''} Segment |${withNode ? ' Node |' : ''} Requests | RPS | p95 (own slice) | Exit | Start offset |`,
    `|---:|${withZone ? '---|' : ''}---|${withNode ? '---|' : ''}---:|---:|---:|---|---:|`,
    ...rows,
  ].join('\n');
}

/** Options of {@link renderReport}. */
export interface ReportOptions {
  /** Heading text (default `k6 distributed run`). */
  title?: string;
  /**
   * Draw the run over time (`result.timeline`) as Mermaid charts, which GitHub renders (job
   * summary, comments); a terminal does not, so the CLI's stdout leaves them out. Default false.
   */
  charts?: boolean;
  /** The `dashboard-url` input: adds a link with the run's time range (src/render/dashboard.ts). */
  dashboardUrl?: string;
}

/**
 * The run over time for Markdown that GitHub renders: the Mermaid charts of RPS and p95 (or the
 * table when they would not fit), under a note on what p95 since start means; '' without a series.
 */
export function renderTimeline(result: Pick<RunResult, 'timeline'>): string {
  const timeline = result.timeline;
  if (!timeline) return '';
  const body = timelineMarkdown(timeline);
  if (!body) return '';
  const note = timeline.latency
    ? `Latency per interval, from the runners' histograms (buckets of ±${(timeline.latency.bucketHalfWidth * 100).toFixed(1)}%).`
    : 'k6 reports percentiles only since the start of the test: p95 is the band between the fastest and the slowest runner (the global p95 lies inside it).';
  return `${body}\n\n_Every ${timeline.intervalS} s across all runners. ${note}_`;
}

/** The whole report. */
export function renderReport(result: RunResult, options: ReportOptions = {}): string {
  const parts = [`## ${escapeMarkdown(options.title ?? 'k6 distributed run')}`];
  const saturated = saturationWarning(result.loadGenerator);
  if (saturated) parts.push(escapeMarkdown(saturated));
  parts.push(renderHeadline(result));
  if (options.dashboardUrl) parts.push(dashboardMarkdown(options.dashboardUrl, result));
  const failures = renderFailures(result);
  if (failures) parts.push(failures);
  parts.push('### Thresholds (judged on the aggregate of all runners)', renderThresholds(result));
  parts.push('### Key metrics', renderKeyMetrics(result));
  const intervals = renderIntervals(result);
  if (intervals) parts.push('### How sure these figures are', intervals);
  const zones = renderZones(result);
  if (zones) parts.push('### Zones', zones, ZONES_NOTE);
  const timeline = options.charts ? renderTimeline(result) : '';
  if (timeline) parts.push('### Over time', timeline);
  const checks = renderChecks(result);
  if (checks) parts.push('### Checks', checks);
  parts.push(
    `### Runners (start skew ${formatMs(result.startSkewMs)})`,
    renderRunners(result),
    "_Per-runner p95 is shown for diagnosis only: global percentiles are merged from every runner's quantiles, never averaged._",
  );
  return `${parts.join('\n\n')}\n`;
}
