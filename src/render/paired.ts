import type {
  AbFigures,
  AbResult,
  AbSideResult,
  PairedMetric,
  PairedVerdictWord,
} from '../result/ab-schema.ts';
import { escapeMarkdown, formatCount, formatMs, formatPercent, formatRate, inlineCode } from './format.ts';

/**
 * The markdown of an A/B result (src/result/ab-schema.ts): the paired section that the report
 * action posts in a PR comment and the CLI's `ab --report` writes. It decides nothing: every
 * verdict, interval and reason is the paired judgement's (src/compare/paired.ts), shown as it is.
 * Changes are B against A with the reference said in words ("paired rounds"); a ratio is shown as
 * a signed percentage (1.23 -> +23.0%), a difference of rates in percentage points.
 */

const ICONS: Record<PairedVerdictWord, string> = {
  regressed: '🔴',
  'no regression': '🟢',
  inconclusive: '🟡',
};

/** The headline: `🔴 A/B rounds: regressed`. */
export function pairedHeadline(ab: AbResult): string {
  return `${ICONS[ab.paired.verdict]} A/B rounds: ${ab.paired.verdict}`;
}

/** A key figure in its unit (`—` when absent). */
function figure(id: PairedMetric['id'], figures: AbFigures): string {
  const v = figures[id];
  if (v === undefined) return '—';
  if (id === 'rps') return formatRate(v);
  if (id === 'error-rate' || id === 'checks') return formatPercent(v);
  return formatMs(v);
}

/** A change in the judgement's form: a ratio as `+12.3%`, a difference of fractions as `+0.50 pp`. */
function change(value: number | undefined, scale: PairedMetric['scale']): string {
  if (value === undefined) return '—';
  const v = scale === 'log' ? (value - 1) * 100 : value * 100;
  const sign = v > 0 ? '+' : v < 0 ? '−' : '±';
  return `${sign}${Math.abs(v).toFixed(scale === 'log' ? 1 : 2)}${scale === 'log' ? '%' : ' pp'}`;
}

/** What makes a side different, as inline code: `BASE_URL=http://…` and its k6 flags. */
function describeSide(side: AbSideResult): string {
  const parts = [
    ...Object.entries(side.env).map(([k, v]) => inlineCode(`${k}=${v}`)),
    ...(side.k6Args.length ? [inlineCode(side.k6Args.join(' '))] : []),
  ];
  return `${escapeMarkdown(side.label)}${parts.length ? ` (${parts.join(' ')})` : ''}`;
}

/**
 * The verdict and its level, with the reason when the list under the table does not give it (a
 * saturated round, every metric within its tolerance).
 */
function verdictLine(ab: AbResult): string {
  const p = ab.paired;
  const listed =
    p.metrics.some((m) => m.gated && m.verdict !== 'no regression') && !ab.rounds.some((r) => r.saturated);
  return `**${p.verdict}** at the ${levelText(p.level)} level${listed ? ', by the metrics listed under the table' : `: ${escapeMarkdown(p.reason)}`}.`;
}

/** The level as a percentage: 0.95 -> `95%`. */
const levelText = (level: number) => `${Math.round(level * 1000) / 10}%`;

/**
 * The paired section: the verdict and its reason, what A and B are, the reference ("paired
 * rounds"), K, the level, one row per key metric (each side's median, the median B/A change over
 * the pairs, the interval, the tolerance, the verdict), a saturation warning when a round
 * saturated, and the rounds in a collapsed table.
 * @param options.heading the markdown heading prefix, default `###`.
 */
export function renderPairedSection(ab: AbResult, options: { heading?: string } = {}): string {
  const p = ab.paired;
  const lines = [
    `${options.heading ?? '###'} ${pairedHeadline(ab)}`,
    '',
    verdictLine(ab),
    '',
    `Reference: **paired rounds**. ${p.rounds} rounds (K = ${p.rounds}, ${p.pairs} A-B pair${p.pairs === 1 ? '' : 's'}) in ABBA order ` +
      `on ${ab.runners} ${escapeMarkdown(ab.backend)} runners; each change is B against A within a pair, ` +
      `with a ${levelText(p.level)} Student t interval over the pairs: latency and RPS as ratios B/A, ` +
      'error rate and checks as differences B − A in percentage points.',
    '',
    `- **A**: ${describeSide(ab.a)}`,
    `- **B**: ${describeSide(ab.b)}`,
  ];
  if (ab.interrupted) lines.push('', `⚠️ Interrupted: only ${ab.rounds.length} rounds ran.`);
  const saturated = ab.rounds.filter((r) => r.saturated);
  if (saturated.length) {
    lines.push(
      '',
      `⚠️ The load generator saturated in round ${saturated.map((r) => `${r.round} (${r.side})`).join(', ')}: ` +
        `${escapeMarkdown(saturated[0]!.saturationReasons[0] ?? 'see the round')}. No comparison is judged on it.`,
    );
  }
  lines.push(
    '',
    `| Metric | A (median) | B (median) | Median B/A | ${levelText(p.level)} interval | Tolerance | Verdict |`,
    '|---|---:|---:|---:|---|---:|---|',
  );
  for (const m of p.metrics) {
    const interval = m.low === undefined ? '—' : `${change(m.low, m.scale)} to ${change(m.high, m.scale)}`;
    lines.push(
      `| ${m.label}${m.gated ? '' : ' (not gated)'} | ${figure(m.id, ab.a.aggregate)} | ${figure(m.id, ab.b.aggregate)} | ` +
        `${change(m.median, m.scale)} | ${interval} | ${change(m.limit, m.scale)} | ${ICONS[m.verdict]} ${m.verdict} |`,
    );
  }
  const undecided = p.metrics.filter((m) => m.gated && m.verdict !== 'no regression');
  if (undecided.length) {
    lines.push('');
    for (const m of undecided) lines.push(`- ${m.label}: ${escapeMarkdown(m.reason)}`);
  }
  lines.push(
    '',
    '<details><summary>Rounds</summary>',
    '',
    '| Round | Block | Side | Started | RPS | p50 | p95 | p99 | Errors | Checks | Requests | Verdict |',
    '|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  for (const r of ab.rounds) {
    const f = r.figures;
    lines.push(
      `| ${r.round} | ${r.block} | ${r.side} | ${r.startedAt} | ${figure('rps', f)} | ${figure('p50', f)} | ` +
        `${figure('p95', f)} | ${figure('p99', f)} | ${figure('error-rate', f)} | ${figure('checks', f)} | ` +
        `${f.requests === undefined ? '—' : formatCount(f.requests)} | ${r.verdict}${r.saturated ? ' ⚠️ saturated' : ''} |`,
    );
  }
  lines.push('', '</details>');
  return lines.join('\n');
}

/** The whole markdown report of an A/B run (the CLI's `--report`): a title, then the paired section. */
export function renderAbReport(ab: AbResult): string {
  return [
    `# k6-distributed A/B rounds: ${escapeMarkdown(ab.script)}`,
    '',
    renderPairedSection(ab, { heading: '##' }),
    '',
  ].join('\n');
}
