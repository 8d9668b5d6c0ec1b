/**
 * A metric's change between two runs as text: its values, the signed delta and the change cell.
 * Shared by the PR comment, the HTML report and the report action's annotations.
 */

import type { MetricDelta } from '../compare/compare.ts';
import { formatMs, formatPercent, formatRate } from './format.ts';
import { formatWithInterval } from './uncertainty.ts';

/** A value in its unit: ms, requests per second, or a percentage for rates. */
export function formatDeltaValue(d: MetricDelta, value: number | undefined): string {
  if (value === undefined) return '—';
  if (d.unit === 'ms') return formatMs(value);
  if (d.unit === '/s') return formatRate(value);
  return formatPercent(value);
}

/** A side's value with its in-run interval when the comparison has it: `22.00ms ± 0.40ms`. */
export function formatSide(d: MetricDelta, side: 'base' | 'head'): string {
  const value = d[side];
  if (value === undefined) return '—';
  const estimate = side === 'base' ? d.baseEstimate : d.headEstimate;
  return estimate ? formatWithInterval(value, estimate, d.unit) : formatDeltaValue(d, value);
}

function signed(value: number, unit: MetricDelta['unit']): string {
  const sign = value > 0 ? '+' : value < 0 ? '−' : '±';
  const abs = Math.abs(value);
  const amount =
    unit === 'ms' ? formatMs(abs) : unit === '/s' ? formatRate(abs) : `${(abs * 100).toFixed(2)} pp`;
  return `${sign}${amount}`;
}

/**
 * The interval of the change (head − base, each end a one-sided 95% bound) with the tolerance it
 * was held to: `−0.80ms … +2.10ms (tolerance 2.20ms)`; '' without a judgement.
 */
export function formatDeltaInterval(d: MetricDelta): string {
  const j = d.judgement;
  if (!j) return '';
  const [low, high] = j.interval;
  const tolerance =
    d.unit === 'pp' ? `${(j.tolerance * 100).toFixed(2)} pp` : formatDeltaValue(d, j.tolerance);
  return `${signed(low, d.unit)} … ${signed(high, d.unit)} (tolerance ${tolerance})`;
}

/** A signed delta with its relative change: `+3.00ms (+25.0%)`, `-0.20 pp`, `—` when not comparable. */
export function formatDelta(d: MetricDelta): string {
  if (d.delta === undefined) return '—';
  const sign = d.delta > 0 ? '+' : d.delta < 0 ? '-' : '±';
  const abs = Math.abs(d.delta);
  const amount =
    d.unit === 'ms' ? formatMs(abs) : d.unit === '/s' ? formatRate(abs) : `${(abs * 100).toFixed(2)} pp`;
  const rel =
    d.deltaPct === undefined || !Number.isFinite(d.deltaPct)
      ? ''
      : ` (${d.deltaPct > 0 ? '+' : d.deltaPct < 0 ? '-' : '±'}${Math.abs(d.deltaPct).toFixed(1)}%)`;
  return `${sign}${amount}${rel}`;
}

/** How a change cell reads, before each renderer decorates it (an emoji, a coloured span). */
export interface ChangeCell {
  /** The words: `better`, `within tolerance`, `worse (not gated)`, `—` … */
  words: string;
  /** `better` and `worse` (a gated regression), `warn` (worse, but not gated or not judged), `neutral`, `missing`. */
  tone: 'better' | 'neutral' | 'worse' | 'warn' | 'missing';
}

/**
 * The direction-aware change of a metric as words, for every renderer. A key metric shows its
 * three-way judgement (src/compare/significance.ts: `regressed`, `no regression`, `inconclusive`,
 * `better`); a submetric its fixed rule. A regression counts only when judged (same environment,
 * no saturated generator) and gated.
 * @param judged whether the comparison is judged (false when the environment changed).
 */
export function changeCell(d: MetricDelta, judged: boolean): ChangeCell {
  // Not judged (another environment, a saturated generator): the fixed words below, marked so.
  const verdict = judged ? d.judgement?.verdict : undefined;
  switch (verdict) {
    case 'regressed':
      return d.gated
        ? { words: 'regressed', tone: 'worse' }
        : { words: 'regressed (not gated)', tone: 'warn' };
    case 'improved':
      return { words: 'better', tone: 'better' };
    case 'no-regression':
      return { words: 'no regression', tone: 'neutral' };
    case 'inconclusive':
      return d.gated
        ? { words: 'inconclusive', tone: 'warn' }
        : { words: 'inconclusive (not gated)', tone: 'neutral' };
    case undefined:
      break;
  }
  switch (d.change) {
    case 'better':
      return { words: 'better', tone: 'better' };
    case 'unchanged':
      return {
        words:
          d.noise && d.baselineChange === 'worse' ? "within the history's normal range" : 'within tolerance',
        tone: 'neutral',
      };
    case 'missing':
      return { words: '—', tone: 'missing' };
    case 'worse':
      if (!judged) return { words: 'worse (not judged)', tone: 'warn' };
      return d.gated ? { words: 'worse', tone: 'worse' } : { words: 'worse (not gated)', tone: 'warn' };
  }
}

/** The emoji the Markdown change cell starts with, by tone. */
const CHANGE_EMOJI: Record<ChangeCell['tone'], string> = {
  better: '🟢 ',
  neutral: '⚪ ',
  worse: '🔴 ',
  warn: '🟠 ',
  missing: '',
};

/** The direction-aware change cell in Markdown ({@link changeCell} with its emoji): `🔴 worse`. */
export function formatChange(d: MetricDelta, judged: boolean): string {
  const { words, tone } = changeCell(d, judged);
  return `${CHANGE_EMOJI[tone]}${words}`;
}

/** One regression as a line for annotations and the verdict: `Latency p95 12.00ms -> 15.00ms (+3.00ms (+25.0%))`. */
export function describeDelta(d: MetricDelta): string {
  const label = d.id === 'submetric' ? `${d.label} ${d.source.slice(d.label.length + 1)}` : d.label;
  return `${label} ${formatDeltaValue(d, d.base)} -> ${formatDeltaValue(d, d.head)} (${formatDelta(d)})`;
}
