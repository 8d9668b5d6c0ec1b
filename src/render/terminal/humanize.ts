import { percentileKey } from '../../k6/thresholds-parser.ts';
import type { MetricResult, RunResult, ThresholdRow } from '../../result/schema.ts';

/**
 * Metric values written as k6 v2.2.0 writes them in its end-of-test summary
 * (`internal/js/summary.js`: `humanizeValue`, `humanizeBytes`, `humanizeGenericDuration`,
 * `nonTrendMetricValueForSum`), so that the terminal report reads like `k6 run`'s own and its
 * numbers can be compared with it character for character. Durations are ms in, `1.31ms`,
 * `498.63µs`, `1m30s` out; data is bytes in, `8.9 kB` out; rates are fractions in, `50.00%` out.
 */

/** The fields of a metric its values are written from. */
export type MetricKind = Pick<MetricResult, 'type' | 'contains'>;

/** A number with at most `digits` decimals and no trailing zeros (`1321.714232`, `20`). */
function noTrailingZeros(value: number, digits: number): string {
  return String(Number.parseFloat(value.toFixed(digits)));
}

/**
 * As {@link noTrailingZeros}, truncated rather than rounded (k6's durations: 3.097 -> `3.09`). The
 * scaled value is first rounded to 12 significant digits: 512.3 × 100 is 51229.999… in binary, and
 * k6 prints `512.29ms` for it; here it stays `512.3ms`.
 */
function truncated(value: number, digits: number): string {
  const scale = 10 ** digits;
  return noTrailingZeros(Math.trunc(Number((value * scale).toPrecision(12))) / scale, digits);
}

/** Bytes in decimal units: `0 B`, `8.9 kB`, `591 kB` (k6's `humanizeBytes`). */
export function humanizeBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  if (bytes < 10) return `${noTrailingZeros(bytes, 2)} B`;
  const exponent = Math.min(units.length - 1, Math.floor(Math.log(bytes) / Math.log(1000)));
  const value = Math.floor((bytes / 1000 ** exponent) * 10 + 0.5) / 10;
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[exponent]}`;
}

/** A duration in ms: `0s`, `850ns`, `498.63µs`, `3.09ms`, `1.5s`, `1m30s`, `2h0m0s` (k6's `humanizeGenericDuration`). */
export function humanizeDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 0.001) return `${Math.trunc(ms * 1e6)}ns`;
  if (ms < 1) return `${truncated(ms * 1000, 2)}µs`;
  if (ms < 1000) return `${truncated(ms, 2)}ms`;
  const seconds = `${truncated((ms % 60000) / 1000, ms > 60000 ? 0 : 2)}s`;
  const minutes = Math.trunc(ms / 60000);
  if (minutes < 1) return seconds;
  const hours = Math.trunc(minutes / 60);
  return hours < 1 ? `${minutes % 60}m${seconds}` : `${hours}h${minutes % 60}m${seconds}`;
}

/** The script's `summaryTimeUnit` values k6 accepts, and the factor from ms to each. */
const TIME_UNITS: Record<string, { unit: string; factor: number }> = {
  s: { unit: 's', factor: 0.001 },
  ms: { unit: 'ms', factor: 1 },
  us: { unit: 'µs', factor: 1000 },
};

/**
 * One value of a metric in its unit: a rate metric's fraction as a percentage truncated to two
 * decimals, data as bytes, time as a duration (in the script's `summaryTimeUnit` when it set one,
 * with two decimals), anything else with up to six decimals.
 * @param timeUnit the script's `summaryTimeUnit` ('' when unset).
 */
export function humanizeValue(value: number, metric: MetricKind, timeUnit = ''): string {
  if (metric.type === 'rate')
    return `${(Math.trunc(Number((value * 10000).toPrecision(12))) / 100).toFixed(2)}%`;
  if (metric.contains === 'data') return humanizeBytes(value);
  if (metric.contains === 'time') {
    const fixed = TIME_UNITS[timeUnit];
    return fixed ? `${(value * fixed.factor).toFixed(2)}${fixed.unit}` : humanizeDuration(value);
  }
  return noTrailingZeros(value, 6);
}

/**
 * One statistic of a metric as k6 writes it beside a threshold or in a trend's column: `count` of
 * a trend as a plain number, `rate` of a counter per second (`1321.714232/s`, `591 kB/s`), every
 * other statistic by {@link humanizeValue}.
 */
export function humanizeStat(stat: string, value: number, metric: MetricKind, timeUnit = ''): string {
  if (metric.type === 'trend' && stat === 'count') return String(value);
  if (metric.type === 'counter' && stat === 'rate') return `${humanizeValue(value, metric, timeUnit)}/s`;
  return humanizeValue(value, metric, timeUnit);
}

/**
 * The value columns of a counter, gauge or rate as k6 prints them after the dots: a counter's
 * count and rate (`20`, `1321.714232/s`), a gauge's value, min and max (`10`, `min=1`, `max=10`), a
 * rate's percentage and counts (`50.00%`, `20 out of 40`).
 */
export function nonTrendColumns(metric: MetricResult, timeUnit = ''): string[] {
  const v = metric.values;
  const at = (key: string) => humanizeValue(v[key] ?? 0, metric, timeUnit);
  switch (metric.type) {
    case 'counter':
      return [at('count'), humanizeStat('rate', v.rate ?? 0, metric, timeUnit)];
    case 'gauge':
      return [at('value'), `min=${at('min')}`, `max=${at('max')}`];
    case 'rate': {
      const passes = v.passes ?? 0;
      return [at('rate'), `${passes} out of ${passes + (v.fails ?? 0)}`];
    }
    default:
      return ['[no data]'];
  }
}

/** A threshold's observed value as k6 writes it beside the threshold: `p(95)` and `3.09ms`. */
export interface ObservedText {
  /** The aggregation method of the expression (`p(95)`, `rate`, `count`). */
  method: string;
  /** The value judged, or `no samples`. */
  value: string;
  /** The merge's uncertainty band `low–high` when the limit lies inside it (`ThresholdRow.uncertain`). */
  band?: string;
}

/** What a threshold row was judged on, written in its metric's unit (the script's `summaryTimeUnit`). */
export function thresholdObserved(result: RunResult, t: ThresholdRow): ObservedText {
  const method = t.expression.split(/[<>=!]/)[0]!.trim();
  const metric = result.metrics[t.metric];
  if (t.observed === undefined || !metric) return { method, value: 'no samples' };
  const percent = /^p\((.*)\)$/.exec(method);
  const stat = percent ? percentileKey(Number(percent[1])) : method;
  const unit = result.summary?.options.summaryTimeUnit ?? '';
  const show = (v: number) => humanizeStat(stat, v, metric, unit);
  return {
    method,
    value: show(t.observed),
    ...(t.uncertain && t.band ? { band: `${show(t.band[0])}–${show(t.band[1])}` } : {}),
  };
}
