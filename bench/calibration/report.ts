import type { BootstrapRow } from './bootstrap.ts';
import type { Row } from './evaluate.ts';
import { share } from './stats.ts';

/** The calibration's markdown: the targets first, then every row, the bootstrap and the method. */

/** What the md needs besides the rows. */
export interface ReportMeta {
  label?: string;
  date: string;
  command: string;
  runsPerCell: number;
  durationS: number;
  rate: number;
  windowS: number;
  abRounds: number;
  cells: Record<string, number>;
  notes: string[];
  pairedSource: string;
  mixtureError: Record<string, number>;
  wallS?: number;
}

const pct = (x: number | undefined) =>
  x === undefined || Number.isNaN(x) ? '–' : `${(100 * x).toFixed(1)}%`;
const signed = (x: number | undefined) =>
  x === undefined || Number.isNaN(x) ? '–' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');

/** The targets of issue 24 read off the real-run rows. */
export function targetLines(rows: Row[]): string[] {
  const lines = [
    '| shape | target | mode | figure | requests per side | |',
    '| --- | --- | --- | --- | ---: | --- |',
  ];
  for (const shape of [...new Set(rows.map((r) => r.shape))]) {
    const find = (mode: Row['mode'], kind: string) =>
      rows.find((r) => r.shape === shape && r.mode === mode && r.kind === kind);
    const aa = find('fixed', 'A/A');
    if (aa) {
      const t = aa.tally;
      lines.push(
        `| ${shape} | A/A judged regressed ≤ 1% | fixed rule | ${share(t.regressed, t.n)}, upper 95% ${pct(t.regressedUpper95)} | ${t.requestsPerSide} | ${verdict(t.regressed / t.n <= 0.01)} |`,
      );
      lines.push(
        `| ${shape} | A/A judged inconclusive ≤ 10% | fixed rule | ${share(t.inconclusive, t.n)} | ${t.requestsPerSide} | ${verdict(t.inconclusive / t.n <= 0.1)} |`,
      );
    }
    const inRun = find('in-run', 'A/A');
    if (inRun) {
      const t = inRun.tally;
      lines.push(
        `| ${shape} | A/A judged regressed ≤ 1% | in-run uncertainty | ${share(t.regressed, t.n)}, upper 95% ${pct(t.regressedUpper95)} | ${t.requestsPerSide} | ${verdict(t.regressed / t.n <= 0.01)} |`,
      );
      lines.push(
        `| ${shape} | A/A judged inconclusive ≤ 10% | in-run uncertainty | ${share(t.inconclusive, t.n)} | ${t.requestsPerSide} | ${verdict(t.inconclusive / t.n <= 0.1)} |`,
      );
    }
    for (const mode of ['in-run', 'fixed'] as const) {
      const p20 = find(mode, '+20%');
      if (p20) {
        const t = p20.tally;
        lines.push(
          `| ${shape} | +20% caught ≥ 80%, one run vs one baseline | ${mode} | ${share(t.regressed, t.n)} | ${t.requestsPerSide} | ${verdict(t.regressed / t.n >= 0.8)} |`,
        );
        break;
      }
    }
    for (const mode of ['ab-rounds', 'ab-rounds (resampled)'] as const) {
      const p10 = find(mode, '+10%');
      if (p10) {
        const t = p10.tally;
        lines.push(
          `| ${shape} | +10% caught ≥ 90% with A/B rounds | ${mode} | ${share(t.regressed, t.n)} | ${t.requestsPerSide} | ${verdict(t.regressed / t.n >= 0.9)} |`,
        );
      }
    }
    for (const r of rows.filter(
      (x) => x.shape === shape && x.kind === 'saturated' && !x.mode.includes('resampled'),
    )) {
      const t = r.tally;
      lines.push(
        `| ${shape} | saturated: 0 judged regressed or passed | ${r.mode} | ${share(t.n - t.inconclusive, t.n)} | ${t.requestsPerSide} | ${verdict(t.n - t.inconclusive === 0)} |`,
      );
    }
  }
  return lines;
}

/** Every row, per shape and mode. */
export function rowLines(rows: Row[]): string[] {
  const lines = [
    '| shape | mode | comparison | measured p95 change | saturated runs | n | requests per side | regressed | inconclusive | no regression | other |',
    '| --- | --- | --- | ---: | --- | ---: | ---: | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const t = r.tally;
    lines.push(
      `| ${r.shape} | ${r.mode} | ${r.kind} | ${signed(r.measuredP95Change)} | ${r.saturatedRuns ?? '–'} | ${t.n} | ${t.requestsPerSide} | ${share(t.regressed, t.n)} | ${share(t.inconclusive, t.n)} | ${share(t.pass, t.n)} | ${t.other} |`,
    );
  }
  return lines;
}

/** The bootstrap's table. */
export function bootstrapLines(rows: BootstrapRow[]): string[] {
  if (rows.length === 0) return ['(no shape had 2 or more unsaturated A runs to resample)'];
  const kinds = [...new Set(rows.flatMap((r) => Object.keys(r.fixed)))];
  const lines = [
    `| shape | runs drawn | length | requests per side | fixed: ${kinds.map((k) => (k === 'A/A' ? 'A/A regressed' : `${k} caught`)).join(' | fixed: ')} | A/B: A/A regressed | A/B: A/A inconclusive | A/B: ${kinds
      .filter((k) => k !== 'A/A')
      .map((k) => `${k} caught`)
      .join(' | A/B: ')} |`,
  ];
  lines.push(`| --- | --- | ---: | ---: |${' ---: |'.repeat(kinds.length * 2 + 1)}`);
  for (const r of rows)
    lines.push(
      `| ${r.shape} | ${r.variant} | ${r.seconds} s | ${r.requestsPerSide} | ${kinds.map((k) => pct(r.fixed[k]?.regressed)).join(' | ')} | ${pct(r.ab['A/A']?.regressed)} | ${pct(r.ab['A/A']?.inconclusive)} | ${kinds
        .filter((k) => k !== 'A/A')
        .map((k) => pct(r.ab[k]?.regressed))
        .join(' | ')} |`,
    );
  return lines;
}

/**
 * The run size at which the targets hold, read off the bootstrap (per-run variant, the
 * conservative one): the shortest length whose fixed-rule A/A false alarms are ≤ 1% and +20% caught
 * ≥ 80%, and the shortest whose A/B A/A false alarms are ≤ 1% and +10% caught ≥ 90%.
 */
export function sizeLines(rows: BootstrapRow[]): string[] {
  const out: string[] = [];
  for (const shape of [...new Set(rows.map((r) => r.shape))]) {
    const rs = rows
      .filter((r) => r.shape === shape && r.variant === 'per-run')
      .sort((x, y) => x.windows - y.windows);
    const fixed = rs.find(
      (r) => (r.fixed['A/A']?.regressed ?? 1) <= 0.01 && (r.fixed['+20%']?.regressed ?? 0) >= 0.8,
    );
    const ab = rs.find((r) => (r.ab['A/A']?.regressed ?? 1) <= 0.01 && (r.ab['+10%']?.regressed ?? 0) >= 0.9);
    const longest = rs.at(-1);
    out.push(
      `- ${shape}, one run against one baseline (fixed rule): ${
        fixed
          ? `targets hold from ${fixed.seconds} s (${fixed.requestsPerSide} requests per side): A/A ${pct(fixed.fixed['A/A']?.regressed)}, +20% ${pct(fixed.fixed['+20%']?.regressed)}`
          : `not reached up to ${longest?.seconds} s: A/A ${pct(longest?.fixed['A/A']?.regressed)} regressed, +20% ${pct(longest?.fixed['+20%']?.regressed)} caught`
      }.`,
    );
    out.push(
      `- ${shape}, A/B rounds (stand-in paired test): ${
        ab
          ? `targets hold from ${ab.seconds} s per side (${ab.requestsPerSide} requests per side): A/A ${pct(ab.ab['A/A']?.regressed)}, +10% ${pct(ab.ab['+10%']?.regressed)}`
          : `not reached up to ${longest?.seconds} s: A/A ${pct(longest?.ab['A/A']?.regressed)} regressed, +10% ${pct(longest?.ab['+10%']?.regressed)} caught`
      }.`,
    );
  }
  return out;
}
