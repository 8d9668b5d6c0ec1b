import type { RunResult } from '../result/schema.ts';
import { escapeMarkdown, formatCount, formatMs, formatPercent, formatRate } from './format.ts';

/**
 * The per-zone breakdown of a run with load zones (`result.zones`, src/result/zone-schema.ts) as
 * one table for every renderer (markdown, HTML, terminal): each zone's share, runners, requests,
 * RPS, error rate, latency percentiles of `http_req_duration` (merged from its runners' quantile
 * grids, never averaged) and start skew.
 */

/** The table's header cells. */
export const ZONE_COLUMNS = [
  'Zone',
  'Share',
  'Runners',
  'Requests',
  'RPS',
  'Errors',
  'p50',
  'p90',
  'p95',
  'p99',
  'Start skew',
] as const;

/** The table's rows as text cells (no markup), in the zones' order; [] for a run without zones. */
export function zoneRows(result: Pick<RunResult, 'zones'>): string[][] {
  return (result.zones ?? []).map((z) => {
    const l = z.latencyMs;
    const ms = (v: number | undefined) => (v === undefined ? '—' : formatMs(v));
    return [
      z.name,
      `${z.share}%`,
      z.runnersOk === z.runners.length
        ? String(z.runners.length)
        : `${z.runnersOk} of ${z.runners.length} ok`,
      formatCount(z.requests),
      formatRate(z.rps),
      z.errorRate === undefined ? '—' : formatPercent(z.errorRate),
      ms(l?.med),
      ms(l?.p90),
      ms(l?.p95),
      ms(l?.p99),
      `${formatMs(z.startSkewMs)} (+${formatMs(z.startOffsetMs)})`,
    ];
  });
}

/** The markdown table of {@link zoneRows}; '' for a run without zones. */
export function renderZones(result: Pick<RunResult, 'zones'>): string {
  const rows = zoneRows(result);
  if (rows.length === 0) return '';
  return [
    `| ${ZONE_COLUMNS.join(' | ')} |`,
    `|---|${ZONE_COLUMNS.slice(1)
      .map(() => '---:')
      .join('|')}|`,
    ...rows.map((cells) => `| ${cells.map(escapeMarkdown).join(' | ')} |`),
  ].join('\n');
}

/** The note under the table. */
export const ZONES_NOTE =
  "_Each zone's figures merge its own runners' summaries; the thresholds and the verdict are the whole run's. Start skew: the spread of the zone's runners' starts (+ how long after the run's first runner its first started)._";
