import type { RunResult } from '../result/schema.ts';
import { type Estimate, type Uncertainty, uncertaintySchema } from '../result/uncertainty-schema.ts';
import { formatMs, formatPercent, formatRate } from './format.ts';

/**
 * A figure with its in-run interval as text, for every renderer: `22.00ms ± 0.40ms`, or
 * `40.00ms −1.20/+3.50ms` when the interval is lopsided (a tail percentile of a skewed latency).
 * The interval is the result's own (`RunResult.uncertainty`, src/result/uncertainty.ts).
 */

/** The unit a figure is written in: ms, requests per second, or a fraction shown as %. */
export type FigureUnit = 'ms' | '/s' | 'pp';

/** A result's uncertainty, or undefined (older result, or a shape this version does not know). */
export function resultUncertainty(result: Pick<RunResult, 'uncertainty'>): Uncertainty | undefined {
  const parsed = uncertaintySchema.safeParse(result.uncertainty);
  return parsed.success ? parsed.data : undefined;
}

function amount(value: number, unit: FigureUnit): string {
  if (unit === 'ms') return formatMs(value);
  if (unit === '/s') return formatRate(value);
  return `${(value * 100).toFixed(2)} pp`;
}

/** A value in its unit without interval: `22.00ms`, `400.0/s`, `0.10%`. */
export function formatFigure(value: number, unit: FigureUnit): string {
  if (unit === 'ms') return formatMs(value);
  if (unit === '/s') return formatRate(value);
  return formatPercent(value);
}

/**
 * `value ± half` (or `value −down/+up` when one side is over 1.5 times the other). For ms and /s
 * the interval is scaled to `value` when it was estimated for another figure of the same run.
 */
export function formatWithInterval(value: number, estimate: Estimate | undefined, unit: FigureUnit): string {
  const text = formatFigure(value, unit);
  if (!estimate) return text;
  const scale = unit !== 'pp' && estimate.value > 0 ? value / estimate.value : 1;
  const down = Math.max(0, estimate.value - estimate.low) * scale;
  const up = Math.max(0, estimate.high - estimate.value) * scale;
  const lopsided = Math.max(down, up) > 1.5 * Math.min(down, up);
  if (!lopsided) return `${text} ± ${amount(Math.max(down, up), unit)}`;
  return `${text} −${amount(down, unit).replace(/ pp$/, '')}/+${amount(up, unit)}`;
}

/** The confidence level as a percentage for a note: `95%`. */
export function levelText(level: number): string {
  return `${Number((level * 100).toFixed(1))}%`;
}

/**
 * The headline figures with their intervals, as `[label, text]` rows: RPS, the latency percentiles
 * (of expected responses when the run has them, as the comparison reads them), the error rate and
 * the check rate. Empty when the result carries no uncertainty (an older result).
 */
export function headlineIntervals(
  result: Pick<RunResult, 'uncertainty' | 'metrics'>,
): Array<[string, string]> {
  const u = resultUncertainty(result);
  if (!u) return [];
  const rows: Array<[string, string]> = [];
  if (u.rps) rows.push(['Requests per second', formatWithInterval(u.rps.value, u.rps, '/s')]);
  const expected = 'http_req_duration{expected_response:true}';
  const key = u.latency[expected] ? expected : 'http_req_duration';
  const latency = u.latency[key];
  for (const p of ['p50', 'p90', 'p95', 'p99'] as const) {
    const e = latency?.[p];
    if (e) rows.push([`${key} ${p}`, formatWithInterval(e.value, e, 'ms')]);
  }
  if (u.errorRate) rows.push(['Error rate', formatWithInterval(u.errorRate.value, u.errorRate, 'pp')]);
  if (u.checks) rows.push(['Checks passed', formatWithInterval(u.checks.value, u.checks, 'pp')]);
  return rows;
}

/** The note under a table of {@link headlineIntervals}: level and method, in one sentence. */
export function intervalsNote(result: Pick<RunResult, 'uncertainty'>): string {
  const u = resultUncertainty(result);
  if (!u) return '';
  const d = Math.max(
    1,
    ...Object.values(u.latency).flatMap((l) =>
      (['p50', 'p90', 'p95', 'p99'] as const).map((p) => l[p]?.designEffect ?? 1),
    ),
  );
  return `± is the ${levelText(u.level)} confidence interval estimated from this run itself (${u.method}; latency variance inflated ${d.toFixed(1)}× over independent samples, from ${u.intervals} intervals and the runners). It does not include run-to-run noise of the machine.`;
}
