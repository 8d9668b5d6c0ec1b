import type { BaselineInfo } from '../compare/baseline.ts';
import { describeTolerance, type MetricDelta } from '../compare/compare.ts';
import type { EnvironmentDifference } from '../compare/environment.ts';
import { METRIC_IDS } from '../compare/judgement.ts';
import type { CommentData, Judgement, ReportVerdict } from '../compare/verdict.ts';
import { dashboardMarkdown } from '../render/dashboard.ts';
import {
  formatChange,
  formatDelta,
  formatDeltaInterval,
  formatDeltaValue,
  formatSide,
} from '../render/delta.ts';
import { escapeMarkdown, formatMs, inlineCode } from '../render/format.ts';
import {
  renderChecks,
  renderFailures,
  renderHeadline,
  renderKeyMetrics,
  renderRunners,
  renderThresholds,
  renderTimeline,
} from '../render/markdown.ts';
import { levelText } from '../render/uncertainty.ts';
import { renderZones, ZONES_NOTE } from '../render/zones.ts';
import { saturationWarning } from '../result/health.ts';
import type { RunResult } from '../result/schema.ts';
import type { Section } from './fit.ts';
import { details, trendSection } from './trend.ts';

/**
 * The pull request report's sections, top to bottom: verdict against the baseline, key metric
 * deltas, thresholds, the history's trend, detail. The same markdown is the PR comment and the job
 * summary. Pure functions: no GitHub calls.
 */

// ---------------------------------------------------------------- values and deltas

function deltaTable(rows: MetricDelta[], judged: boolean, labelOf: (d: MetricDelta) => string): string {
  return [
    '| Metric | Baseline run | This PR | Δ vs baseline run | Change (fixed tolerance) |',
    '|---|---:|---:|---:|---|',
    ...rows.map(
      (d) =>
        `| ${labelOf(d)} | ${formatDeltaValue(d, d.base)} | ${formatDeltaValue(d, d.head)} | ${formatDelta(d)} | ${formatChange(d, judged)} |`,
    ),
  ].join('\n');
}

/** The verdict as the comment's bold line starts it (`🔴 Regressed`). */
export const VERDICT_LINES: Record<ReportVerdict, string> = {
  passed: '🟢 No regression',
  regressed: '🔴 Regressed',
  'no-baseline': '⚪ No baseline yet',
  'baseline-expired': '⚪ Baseline expired',
  'environment-changed': '🟠 Not judged: the environment changed',
  inconclusive: '🟠 Inconclusive',
};

/** A level as a percentage: `99%`, `99.9%`. */
const percent = levelText;

/** One judged key metric for the verdict line: `Latency p95 +13.00ms (+59.1%), interval +11.2ms … +14.8ms (tolerance 2.2ms)`. */
function judgedMetric(d: MetricDelta): string {
  return `${d.label} ${formatDelta(d)}, interval ${formatDeltaInterval(d)}`;
}

function verdictLine(input: CommentData, j: Judgement): string {
  const branch = input.baseline.branch ? ` against ${inlineCode(input.baseline.branch)}` : '';
  const head = `**${VERDICT_LINES[j.verdict]}**`;
  const rows = j.comparison?.keyMetrics ?? [];
  switch (j.verdict) {
    case 'regressed': {
      const list = j.comparison!.gatedRegressions.map((d) =>
        d.judgement ? judgedMetric(d) : `${d.label} ${formatDelta(d)} (worse beyond tolerance)`,
      );
      return `${head}${branch} at ${percent(j.levels.regressed)} confidence: ${list.join('; ')}: beyond the tolerance and not explained by the noise.`;
    }
    case 'passed': {
      const better = rows.filter((d) => d.change === 'better').length;
      const worse = j.comparison!.regressions.length;
      const extra = [
        better > 0 ? `${better} key metric${better === 1 ? '' : 's'} better` : '',
        worse > 0 ? `${worse} ungated metric${worse === 1 ? '' : 's'} worse` : '',
      ].filter(Boolean);
      return `${head}${branch} at ${percent(j.levels.noRegression)} confidence: every gated metric's change is shown to lie within its tolerance${extra.length ? ` (${extra.join('; ')})` : ''}.`;
    }
    case 'environment-changed':
      return `${head}${branch}: the baseline ran in another environment, so the deltas below are for information only.`;
    case 'inconclusive': {
      if (j.inconclusiveBecause === 'uncertain') {
        const open = rows.filter((d) => d.gated && d.judgement?.verdict === 'inconclusive');
        const { settle } = j;
        return `${head}${branch} at ${percent(j.levels.noRegression)} confidence: ${open.map(judgedMetric).join('; ')}: could be within or beyond the tolerance.${settle ? ` Settle it with ${settle}.` : ''}`;
      }
      const sides = [
        input.head.loadGenerator?.saturated ? 'this run' : '',
        input.base?.loadGenerator?.saturated ? 'the baseline' : '',
      ].filter(Boolean);
      return `**${VERDICT_LINES.inconclusive}: the load generator saturated**${branch}: ${sides.join(' and ')} saturated ${sides.length > 1 ? 'their' : 'its'} runners, so the deltas below measure the load generator, not a regression or its absence. Settle it with more VUs (\`maxVUs\`, \`preAllocatedVUs\`), fewer runners per node or a larger runner.`;
    }
    case 'no-baseline':
      return `${head}${branch}: nothing to compare with, so this run is not judged against a baseline.`;
    case 'baseline-expired':
      return `${head}${branch}: the stored result is gone, so this run is not judged against a baseline.`;
  }
}

/**
 * The key metrics table: each side with its in-run interval, the change against the baseline run,
 * the change's interval with the tolerance it was held to, and the verdict on that same change.
 */
function keyMetricTable(rows: MetricDelta[], judged: boolean): string {
  return [
    '| Metric | Baseline run | This PR | Δ vs baseline run | Interval of Δ | Verdict |',
    '|---|---:|---:|---:|---:|---|',
    ...rows.map(
      (d) =>
        `| ${d.gated ? `${d.label} (gate)` : d.label} | ${formatSide(d, 'base')} | ${formatSide(d, 'head')} | ${formatDelta(d)} | ${formatDeltaInterval(d) || '—'} | ${formatChange(d, judged)} |`,
    ),
  ].join('\n');
}

/** Under the key metrics table: how to read it, and the noise model that judged each metric. */
function keyMetricNotes(rows: MetricDelta[], latencyKey: string, levels: Judgement['levels']): string {
  const models = rows.flatMap((d) => (d.judgement ? [`- ${d.label}: ${d.judgement.noise.text}`] : []));
  return [
    `<sub>Latency is ${inlineCode(latencyKey)}. ± is each run's own 95% interval. Δ is this PR minus the baseline run; its interval holds the one-sided ${percent(levels.noRegression)} bounds. **No regression**: the bound on the bad side is within the tolerance. **Regressed**: Δ is beyond the tolerance and its one-sided ${percent(levels.regressed)} bound is on the bad side of zero. Anything else is **inconclusive**.</sub>`,
    ...(models.length > 0 ? ['', details('Noise model of each metric', models.join('\n'))] : []),
  ].join('\n');
}

/** The saturation warning of head, as a line of its own after the verdict; none when it did not saturate. */
function headSaturation(head: RunResult): string[] {
  const warning = saturationWarning(head.loadGenerator);
  return warning ? ['', escapeMarkdown(warning)] : [];
}

function shortSha(sha: string | undefined): string {
  return sha ? inlineCode(sha.slice(0, 7)) : '`?`';
}

function runLink(run: NonNullable<BaselineInfo['run']>): string {
  return `[run ${run.id}](${run.url})`;
}

function baselineLine(b: BaselineInfo): string {
  const branch = b.branch ? inlineCode(b.branch) : 'the base branch';
  if (b.source === 'file')
    return `**Baseline:** the file ${inlineCode(b.file ?? '?')} (the \`baseline\` input).`;
  if (b.state === 'found' && b.run) {
    const where = b.atMergeBase
      ? 'the merge-base of this pull request'
      : b.mergeBase
        ? `the newest successful run on ${branch} (none stored a result at the merge-base ${shortSha(b.mergeBase)})`
        : `the newest successful run on ${branch}`;
    return `**Baseline:** ${runLink(b.run)} on ${branch} at ${shortSha(b.run.sha)}, ${where}.`;
  }
  if (b.state === 'expired' && b.run) {
    const when = b.expiredAt ? ` on ${escapeMarkdown(b.expiredAt.slice(0, 10))}` : '';
    return `**Baseline expired:** the stored result of ${runLink(b.run)} on ${branch} at ${shortSha(b.run.sha)} expired${when} (artifact retention). The next successful run on ${branch} with \`mode: store\` stores a new one.`;
  }
  const checked =
    b.runsChecked === undefined ? '' : `; ${b.runsChecked} run${b.runsChecked === 1 ? '' : 's'} checked`;
  return `**No baseline yet:** no successful run of this workflow on ${branch} has stored a result (artifact ${inlineCode(b.artifactName ?? '?')}${checked}). Run this workflow with \`mode: store\` on pushes to ${branch}; later pull requests are compared with it.`;
}

function environmentWarning(diffs: EnvironmentDifference[], judged: boolean): string {
  const clip = (s: string) => (s.length > 200 ? `${s.slice(0, 199)}…` : s);
  return [
    judged ? '> [!NOTE]' : '> [!WARNING]',
    judged
      ? '> The load test script changed since the baseline; the deltas are still judged (input `script-change: gate`):'
      : '> The baseline ran in another environment, so these deltas are not judged (a regression here does not fail the check):',
    ...diffs.map((d) => `> - ${d.field}: ${inlineCode(clip(d.base))} → ${inlineCode(clip(d.head))}`),
  ].join('\n');
}

function thresholdsSection(head: RunResult): Section {
  const heading = '#### Thresholds of this run (judged on the aggregate of all runners)';
  return {
    id: 'thresholds',
    text: `${heading}\n\n${renderThresholds(head)}`,
    shrink: (budget, measure) => {
      // Failed thresholds first, then as many rows as fit.
      const ordered = [...head.thresholds.filter((t) => !t.ok), ...head.thresholds.filter((t) => t.ok)];
      const render = (n: number) => {
        const rest = ordered.length - n;
        const failedLeft = ordered.slice(n).filter((t) => !t.ok).length;
        const note =
          rest > 0
            ? `\n\n_${rest} more threshold${rest === 1 ? '' : 's'} not shown (${failedLeft} failed); the job summary lists them all._`
            : '';
        const table = n > 0 ? renderThresholds({ ...head, thresholds: ordered.slice(0, n) }) : '';
        return `${heading}\n\n${table}${note}`;
      };
      let lo = 0;
      let hi = ordered.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (measure(render(mid)) <= budget) lo = mid;
        else hi = mid - 1;
      }
      return render(lo);
    },
  };
}

/** The heading when the `title` input is not set: `k6 load test`, plus the key unless it is `default`. */
export function defaultTitle(key: string): string {
  return `k6 load test${key === 'default' ? '' : ` · ${key}`}`;
}

/**
 * The report as sections, top to bottom: marker, heading, verdict, run verdict, baseline,
 * environment warning, key metric deltas, thresholds, then `<details>` (failures, submetrics,
 * checks, runners) and the footer.
 * @param marker the hidden marker to put first ('' for none).
 */
export function renderSections(input: CommentData, j: Judgement, marker: string): Section[] {
  const { head, options } = input;
  const { judged } = j;
  const title = options.title ?? defaultTitle(options.key);
  const sections: Section[] = [];
  sections.push({
    id: 'header',
    text: [
      ...(marker ? [marker] : []),
      `### ${escapeMarkdown(title)}`,
      '',
      verdictLine(input, j),
      ...(input.links.forkRunUrl ? ['', forkNote(input.links.forkRunUrl)] : []),
      ...headSaturation(head),
      '',
      `**This run (its own thresholds):** ${renderHeadline(head)}`,
      ...(options.dashboardUrl ? ['', dashboardMarkdown(options.dashboardUrl, head)] : []),
      '',
      baselineLine(input.baseline),
    ].join('\n'),
  });
  if (j.environmentDiffs.length > 0)
    sections.push({ id: 'environment', text: environmentWarning(j.environmentDiffs, judged) });
  if (j.comparison) {
    const rows = j.comparison.keyMetrics;
    sections.push({
      id: 'key-metrics',
      text: `${keyMetricTable(rows, judged)}\n\n${keyMetricNotes(rows, j.comparison.latencyKey, j.levels)}`,
    });
  } else {
    sections.push({ id: 'key-metrics', text: renderKeyMetrics(head) });
  }
  sections.push(thresholdsSection(head));
  const zones = renderZones(head);
  if (zones)
    sections.push({
      id: 'zones',
      drop: 2.2,
      text: details('Per load zone', `${zones}\n\n${ZONES_NOTE}`, true),
    });
  const trend = trendSection(input, j);
  if (trend) sections.push({ id: 'trend', drop: 2.5, text: trend });
  const timeline = renderTimeline(head);
  if (timeline)
    sections.push({ id: 'timeline', drop: 1.5, text: details('This run over time', timeline, true) });
  const failures = renderFailures(head);
  if (failures) sections.push({ id: 'failures', drop: 4, text: details('Why this run failed', failures) });
  const submetrics = j.comparison?.submetrics ?? [];
  if (submetrics.length > 0) {
    sections.push({
      id: 'submetrics',
      drop: 2,
      text: details(
        `Per scenario and tag (${submetrics.length} submetric${submetrics.length === 1 ? '' : 's'}, not gated)`,
        deltaTable(submetrics, judged, (d) => `${inlineCode(d.label)} ${d.source.slice(d.label.length + 1)}`),
      ),
    });
  }
  const checks = renderChecks(head);
  if (checks) sections.push({ id: 'checks', drop: 3, text: details('Checks', checks) });
  const baseRunners = input.base ? ` (baseline: ${input.base.environment.runners})` : '';
  sections.push({
    id: 'runners',
    drop: 1,
    text: details(
      `Runners: ${head.runners.length}${baseRunners}, start skew ${formatMs(head.startSkewMs)}`,
      `${renderRunners(head)}\n\n_Per-runner p95 is for diagnosis only: global percentiles are merged from every runner's quantiles, never averaged._`,
    ),
  });
  sections.push({ id: 'footer', text: footer(input, j) });
  return sections;
}

/** The line that says who measured the head figures when a fork's own run did. */
export function forkNote(url: string): string {
  return `<sub>Head figures were measured by the fork's own [workflow run](${url}) and are reported as it gave them.</sub>`;
}

function footer(input: CommentData, j: Judgement): string {
  const { options, links } = input;
  const gate = options.gate.length > 0 ? options.gate.join(', ') : 'none';
  const tolerances = METRIC_IDS.map((id) => `${id} ${describeTolerance(id, options.tolerances[id])}`).join(
    ', ',
  );
  const parts = [
    'k6-distributed',
    links.runUrl ? `[workflow run](${links.runUrl})` : '',
    links.headSha ? `head ${shortSha(links.headSha)}` : '',
    `key ${inlineCode(options.key)}`,
    `gate: ${gate}`,
  ].filter(Boolean);
  return `---\n<sub>${parts.join(' · ')}</sub>\n<sub>Tolerances (a change must exceed both, relative and absolute): ${tolerances}. Levels: regressed at ${percent(j.levels.regressed)}, no regression at ${percent(j.levels.noRegression)} (one-sided).</sub>`;
}
