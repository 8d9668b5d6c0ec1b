import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_GATE, DEFAULT_TOLERANCES } from '../../src/compare/judgement.ts';
import type { CommentData } from '../../src/compare/verdict.ts';
import { errorMessage, exitCodeFor, RunError } from '../../src/errors.ts';
import { hasMarker } from '../../src/github/comments.ts';
import { commentMarker, renderReportBodies } from '../../src/pr-comment/comment.ts';
import { renderHtmlReport } from '../../src/render/html/report.ts';
import { renderReport } from '../../src/render/markdown.ts';
import { readRunResult } from '../../src/result/read-result.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { tempDir } from '../support/cli.ts';
import { makeResult } from '../support/results.ts';
import { type FaultCase, type FaultOutcome, faultTable } from './table.ts';

// The report side's hostile inputs: results, baselines and bundles come from runs a pull request
// could change. Each case runs the real parsing and rendering; the exit code is the one the CLI and
// the actions give the failure kind (2: configuration, 0: handled).

const ours = commentMarker({ workflow: 'perf', job: 'load-test', key: 'default' });
const web = commentMarker({ workflow: 'perf', job: 'load-test', key: 'web' });

function data(head: RunResult): CommentData {
  return {
    head,
    baseline: { source: 'artifact', state: 'none', branch: 'main' },
    options: { key: 'default', gate: DEFAULT_GATE, tolerances: DEFAULT_TOLERANCES },
    links: {},
  };
}

/** Runs `body`, mapping a thrown RunError to its exit code and message (one line, no stack). */
async function outcomeOf(body: () => Promise<string[]> | string[]): Promise<FaultOutcome> {
  try {
    const violations = await body();
    return { code: 0, stderr: '', leftovers: violations };
  } catch (error) {
    if (error instanceof RunError)
      return { code: exitCodeFor([error.kind]), stderr: `error: ${error.message}`, leftovers: [] };
    return {
      code: 1,
      stderr: `error: ${errorMessage(error)}\n${(error as Error).stack ?? ''}`,
      leftovers: [],
    };
  }
}

/** A result file in a fresh folder. */
function resultFile(json: string): string {
  const file = path.join(tempDir('k6d-hostile-'), 'result.json');
  writeFileSync(file, json);
  return file;
}

/** A result whose groups nest `depth` deep, written as text (building the object would be as deep). */
function deepGroups(depth: number): string {
  const group = '{"name":"g","path":"::g","checks":[],"groups":[';
  const nested = `${group.repeat(depth)}${group}]}${']}'.repeat(depth)}`;
  return JSON.stringify({ ...makeResult(), rootGroup: '__DEEP__' }).replace('"__DEEP__"', nested);
}

/** What of a rendered body could pick or spoof a comment. */
function markerViolations(body: string): string[] {
  const out: string[] = [];
  if (body.indexOf('<!--') !== 0 || body.indexOf('<!--', 1) >= 0)
    out.push('an HTML comment besides the marker');
  if (hasMarker(body, web)) out.push("the body passes for key web's comment");
  if (!hasMarker(body, ours)) out.push('the body lost its own marker');
  if (/[\u202A-\u202E\u2066-\u2069]/.test(body)) out.push('a bidirectional control in the body');
  return out;
}

/** Bidirectional controls, the marks U+200E/U+200F included. */
const BIDI = /[\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/**
 * What GitHub would turn into a link, a mention or a reference in rendered markdown, or show
 * reversed: the text outside code (where GitHub links nothing) with its backslash escapes read.
 */
function linkViolations(where: string, markdown: string): string[] {
  const text = markdown.replace(/`[^`\n]*`/g, '').replace(/\\([\\`*_[\]{}()#+!|~-])/g, '$1');
  const found = [/\b(?:https?|ftp):\/\//i, /\bwww\./i, /@[a-z0-9]/i, /#\d/, /\bGH-\d/i, BIDI].flatMap((re) =>
    re.test(text) ? [`${where}: ${text.match(re)![0]} (${re})`] : [],
  );
  return found;
}

const cases: FaultCase[] = [
  {
    name: "a threshold named with another key's marker cannot take that key's comment",
    code: 0,
    run: () =>
      outcomeOf(() => {
        const head = makeResult();
        head.thresholds.push({ metric: web, expression: `p(95)<1 ${web}`, ok: false, abortOnFail: false });
        head.failures.push(`runner 0 failed: ${web}`);
        return markerViolations(renderReportBodies(data(head), ours).comment.text);
      }),
  },
  {
    name: 'a marker on its own line of a log tail cannot pass for the comment',
    code: 0,
    run: () =>
      outcomeOf(() => {
        const head = makeResult({}, { verdict: 'failed' });
        head.runners[0] = { ...head.runners[0]!, ok: false, logTail: `boom\n${web}\nagain` };
        return markerViolations(renderReportBodies(data(head), ours).comment.text);
      }),
  },
  {
    name: 'U+202E in a metric name does not reach the comment',
    code: 0,
    run: () =>
      outcomeOf(() => {
        const head = makeResult();
        head.metrics['http_req_duration{name:\u202Eevil\u2066}'] = head.metrics.http_req_duration!;
        head.thresholds.push({ metric: 'x\u202Ey', expression: 'p(95)<1', ok: false, abortOnFail: false });
        return markerViolations(renderReportBodies(data(head), ours).comment.text);
      }),
  },
  {
    name: 'a baseline with negative counts is refused in one line',
    code: 2,
    message:
      /baseline: .* is not a k6-distributed\/result@1 result \(metrics\.http_reqs\.values\.count: must not be negative\)/,
    run: () =>
      outcomeOf(async () => {
        const base = makeResult();
        base.metrics.http_reqs!.values.count = -1_000_000;
        await readRunResult(resultFile(JSON.stringify(base)), 'baseline');
        return ['accepted'];
      }),
  },
  {
    name: 'a result with negative check counts is refused in one line',
    code: 2,
    message: /must not be negative/,
    run: () =>
      outcomeOf(async () => {
        const base = JSON.parse(JSON.stringify(makeResult())) as RunResult;
        base.rootGroup.checks.push({ name: 'c', path: '::c', passes: -5, fails: 0 });
        await readRunResult(resultFile(JSON.stringify(base)), 'baseline');
        return ['accepted'];
      }),
  },
  {
    name: 'groups nested 100,000 deep are refused in one line, without a stack overflow',
    code: 2,
    message: /result: .* nests groups deeper than 100 levels/,
    run: () =>
      outcomeOf(async () => {
        await readRunResult(resultFile(deepGroups(100_000)), 'result');
        return ['accepted'];
      }),
  },
  {
    name: 'groups nested 40 deep (k6 has no limit; the CLI writes such a result) are read',
    code: 0,
    run: () =>
      outcomeOf(async () => {
        const result = await readRunResult(resultFile(deepGroups(40)), 'result');
        let depth = 0;
        for (let g = result.rootGroup; g.groups[0]; g = g.groups[0]) depth++;
        return depth === 40 ? [] : [`read ${depth} group levels of 40`];
      }),
  },
  {
    name: 'JSON nested 65 levels outside the groups is refused in one line',
    code: 2,
    message: /result: .* nests deeper than 64 levels/,
    run: () =>
      outcomeOf(async () => {
        const nested = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`;
        const json = JSON.stringify({ ...makeResult(), extra: '__DEEP__' }).replace('"__DEEP__"', nested);
        await readRunResult(resultFile(json), 'result');
        return ['accepted'];
      }),
  },
  {
    name: 'a result that is not JSON is refused in one line',
    code: 2,
    message: /result: .* is not JSON/,
    run: () =>
      outcomeOf(async () => {
        await readRunResult(resultFile('<html>'), 'result');
        return ['accepted'];
      }),
  },
  {
    name: 'URLs, mentions, references and bidi controls in user text render as text (comment, job summary, HTML)',
    code: 0,
    run: () =>
      outcomeOf(() => {
        const hostile = 'see http://evil.example/x www.evil.example @octocat #123 GH-7 \u202Eabc\u200F';
        const head = makeResult({}, { verdict: 'failed' });
        head.rootGroup.checks.push({ name: hostile, path: `::${hostile}`, passes: 1, fails: 1 });
        head.metrics[`http_req_duration{name:${hostile}}`] = head.metrics.http_req_duration!;
        head.thresholds.push({
          metric: `checks{tag:${hostile}}`,
          expression: hostile,
          ok: false,
          abortOnFail: false,
        });
        head.failures.push(`runner 0 failed (exit 107: script exception): ${hostile}`);
        head.runners[0] = { ...head.runners[0]!, ok: false, logTail: hostile };
        const bodies = renderReportBodies(data(head), ours);
        return [
          ...linkViolations('comment', bodies.comment.text),
          ...linkViolations('summary', bodies.summary.text),
          ...linkViolations('job summary', renderReport(head)),
          ...(BIDI.test(renderHtmlReport({ result: head })) ? ['HTML report: a bidirectional control'] : []),
        ];
      }),
  },
];

faultTable('report faults', cases);
