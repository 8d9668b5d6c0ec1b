import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { GroupResult, RunResult } from '../../src/result/schema.ts';
import { collectOutput, runCli, tempDir } from '../support/cli.ts';

/**
 * The k6-equivalence harness: one script run as a plain `k6 run` and as the product with N
 * runners, both against the same local target, and every deterministic field of the two answers
 * laid side by side. Shared by test/equivalence/equivalence.test.ts and bench/equivalence.ts.
 *
 * From plain k6 it reads: the exit code, `--summary-export` (counts, gauges, trends, checks per
 * group, thresholds as `{expr: true-when-failed}`), the `Metric` lines of `--out json` (each
 * metric's `contains`), files the script's handleSummary wrote in the working folder, and the
 * console lines. From the product: the CLI's exit code, the result JSON, the same files and the
 * CLI's output.
 */

/** One case of the table. */
export interface EquivalenceCase {
  /** Short name, shown in the table. */
  name: string;
  /** What the case covers (executor, feature). */
  covers: string;
  /** The script; `__TARGET__` is replaced by the target's URL. */
  script: string;
  /** Extra k6 flags for both sides (`--no-thresholds`, `--iterations 5`, …). */
  k6Args?: string[];
  /** Extra environment for both sides (`K6_NO_THRESHOLDS=true`). */
  env?: Record<string, string>;
  /**
   * Metric keys whose values are deterministic and compared: counter `count`; rate `passes`,
   * `fails`; gauge `value`, `min`, `max`; trend `min`, `max`, `avg` (only list trends whose samples
   * are fixed numbers). `contains` is compared for each.
   */
  metrics: string[];
  /** Compare every check's passes/fails per group path (default true). */
  checks?: boolean;
  /** Files the script writes (handleSummary, --out) whose text is compared. */
  files?: string[];
  /** `--out json` files whose points of a metric are counted (`(invalid)` when a line is not JSON). */
  points?: { file: string; metric: string };
  /** Markers whose number of console lines is compared (console.log output). */
  console?: string[];
  /** A run ends early when its duration is under this many s: compared as `ended early`. */
  endsEarlyUnderS?: number;
  /**
   * Runner counts at which the product is known not to give k6's answer yet, with the issue #9
   * row that names the difference. The suite expects a difference there (`it.fails`), so it flips
   * to a failure once fixed and the marker must go.
   */
  knownFailing?: { runners: readonly number[]; row: string };
}

/** The answer of one side, as flat fields. */
export type Fields = Map<string, string>;

/** One field compared. */
export interface FieldDiff {
  field: string;
  k6: string;
  product: string;
}

/** Where the k6 binary is: K6_BINARY (set by the test setup) or the pinned build. */
export function k6Binary(): string {
  return process.env.K6_BINARY ?? path.join(process.env.HOME ?? '', '.cache/k6-distributed/k6-v2.2.0/k6');
}

/** `name{tags}` with the tags trimmed, unquoted and sorted, so k6's and our keys compare. */
export function canonicalKey(key: string): string {
  const open = key.indexOf('{');
  if (open === -1 || !key.endsWith('}')) return key;
  const tags = key
    .slice(open + 1, -1)
    .split(',')
    .filter((kv) => kv.trim() !== '')
    .map((kv) => {
      const [k, ...v] = kv.split(':');
      const clean = (s: string) => s.trim().replace(/^["']+|["']+$/g, '');
      return `${clean(k ?? '')}:${clean(v.join(':'))}`;
    })
    .sort();
  return `${key.slice(0, open)}{${tags.join(',')}}`;
}

function fmt(n: unknown): string {
  if (typeof n !== 'number') return n === undefined ? '-' : String(n);
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(9)));
}

function countLines(text: string, marker: string): number {
  return text.split('\n').filter((l) => l.includes(marker)).length;
}

function readFiles(dir: string, c: EquivalenceCase, out: Fields): void {
  for (const f of c.files ?? []) {
    const p = path.join(dir, f);
    out.set(`file ${f}`, existsSync(p) ? readFileSync(p, 'utf8').trim() : '(missing)');
  }
  if (c.points) {
    const p = path.join(dir, c.points.file);
    let value = '(missing)';
    if (existsSync(p)) {
      try {
        value = String(
          readFileSync(p, 'utf8')
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((l) => JSON.parse(l) as { type: string; metric: string })
            .filter((l) => l.type === 'Point' && l.metric === c.points!.metric).length,
        );
      } catch {
        value = '(invalid)';
      }
    }
    out.set(`file ${c.points.file} ${c.points.metric} points`, value);
  }
}

function checkFields(group: GroupResult, out: Fields): void {
  for (const c of group.checks) out.set(`check ${c.path}`, `${c.passes} passed / ${c.fails} failed`);
  for (const g of group.groups) checkFields(g, out);
}

type Raw = Record<string, unknown>;

function legacyGroup(raw: Raw): GroupResult {
  return {
    name: String(raw.name ?? ''),
    path: String(raw.path ?? ''),
    groups: Object.values((raw.groups ?? {}) as Record<string, Raw>).map(legacyGroup),
    checks: Object.values((raw.checks ?? {}) as Record<string, Raw>).map((c) => ({
      name: String(c.name),
      path: String(c.path),
      passes: Number(c.passes),
      fails: Number(c.fails),
    })),
  };
}

function metricFields(
  c: EquivalenceCase,
  lookup: (key: string) => { values: Record<string, number>; contains?: string } | undefined,
  out: Fields,
): void {
  for (const key of c.metrics) {
    const m = lookup(canonicalKey(key));
    if (!m) {
      out.set(`${key}`, '(absent)');
      continue;
    }
    const v = m.values;
    const stats =
      'passes' in v
        ? ['passes', 'fails']
        : 'avg' in v
          ? ['min', 'max', 'avg']
          : 'value' in v
            ? ['value', 'min', 'max']
            : ['count'];
    out.set(`${key} ${stats.join('/')}`, stats.map((s) => fmt(v[s])).join(' / '));
    if (m.contains !== undefined) out.set(`${key} contains`, m.contains);
  }
}

function prepare(c: EquivalenceCase, targetUrl: string): { dir: string; script: string } {
  const dir = tempDir('k6d-eq-');
  const script = path.join(dir, 'script.js');
  writeFileSync(script, c.script.replaceAll('__TARGET__', targetUrl));
  return { dir, script };
}

/** Runs the case as one plain `k6 run` and returns its fields. */
export async function runK6(c: EquivalenceCase, targetUrl: string): Promise<Fields> {
  const { dir, script } = prepare(c, targetUrl);
  const child = spawn(
    k6Binary(),
    [
      'run',
      '--no-usage-report',
      '--no-color',
      '--summary-export',
      'k6-export.json',
      '--out',
      'json=k6-metrics.json',
      ...(c.k6Args ?? []),
      script,
    ],
    { cwd: dir, env: { ...process.env, ...c.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const { code, stdout, stderr } = await collectOutput(child);
  const out: Fields = new Map([['exit code', String(code)]]);
  let exported: Raw = {};
  try {
    exported = JSON.parse(readFileSync(path.join(dir, 'k6-export.json'), 'utf8')) as Raw;
  } catch {
    // no summary: fields stay absent
  }
  const contains = new Map<string, string>();
  try {
    for (const line of readFileSync(path.join(dir, 'k6-metrics.json'), 'utf8').split('\n')) {
      if (!line.includes('"type":"Metric"')) continue;
      const m = JSON.parse(line) as { data: { name: string; contains: string } };
      contains.set(m.data.name, m.data.contains);
    }
  } catch {
    // no raw output
  }
  const metrics = (exported.metrics ?? {}) as Record<string, Raw>;
  const byCanon = new Map(Object.entries(metrics).map(([k, v]) => [canonicalKey(k), v]));
  thresholdFields(
    Object.entries(metrics).flatMap(([key, m]) =>
      Object.entries((m.thresholds ?? {}) as Record<string, boolean>).map(([expr, failed]) => ({
        key,
        expr,
        ok: !failed,
      })),
    ),
    out,
  );
  metricFields(
    c,
    (key) => {
      const m = byCanon.get(key);
      if (!m) return undefined;
      const values = Object.fromEntries(Object.entries(m).filter(([, v]) => typeof v === 'number')) as Record<
        string,
        number
      >;
      const known = contains.get(key.split('{')[0]!);
      return known === undefined ? { values } : { values, contains: known };
    },
    out,
  );
  if (c.checks !== false) checkFields(legacyGroup((exported.root_group ?? {}) as Raw), out);
  if (c.endsEarlyUnderS !== undefined) {
    const it = metrics.iterations as { count?: number; rate?: number } | undefined;
    const duration = it?.count && it.rate ? it.count / it.rate : undefined;
    out.set(
      `ended early (< ${c.endsEarlyUnderS} s)`,
      String(duration !== undefined && duration < c.endsEarlyUnderS),
    );
  }
  readFiles(dir, c, out);
  for (const marker of c.console ?? [])
    out.set(`console "${marker}" lines`, String(countLines(`${stdout}\n${stderr}`, marker)));
  return out;
}

function thresholdFields(rows: Array<{ key: string; expr: string; ok: boolean }>, out: Fields): void {
  for (const r of rows) out.set(`threshold ${canonicalKey(r.key)} ${r.expr}`, r.ok ? 'ok' : 'crossed');
}

/** Runs the case with the product (the CLI from source) on `runners` runners and returns its fields. */
export async function runProduct(c: EquivalenceCase, targetUrl: string, runners: number): Promise<Fields> {
  const { dir, script } = prepare(c, targetUrl);
  const run = await runCli(
    ['run', script, '-n', String(runners), '--progress-interval', '1', '--', ...(c.k6Args ?? [])],
    { cwd: dir, ...(c.env ? { env: c.env } : {}) },
  );
  const out: Fields = new Map([['exit code', String(run.code)]]);
  const result: RunResult | undefined = run.result;
  if (result) {
    thresholdFields(
      result.thresholds.map((t) => ({ key: t.metric, expr: t.expression, ok: t.ok })),
      out,
    );
    const byCanon = new Map(Object.entries(result.metrics).map(([k, v]) => [canonicalKey(k), v]));
    metricFields(c, (key) => byCanon.get(key), out);
    if (c.checks !== false) checkFields(result.rootGroup, out);
    if (c.endsEarlyUnderS !== undefined)
      out.set(`ended early (< ${c.endsEarlyUnderS} s)`, String(result.durationS < c.endsEarlyUnderS));
  }
  readFiles(dir, c, out);
  for (const marker of c.console ?? [])
    out.set(`console "${marker}" lines`, String(countLines(`${run.stdout}\n${run.stderr}`, marker)));
  if (run.code === 2 || run.code === 1) out.set('product error', firstError(run.stderr));
  return out;
}

function firstError(stderr: string): string {
  return (
    stderr
      .split('\n')
      .find((l) => /error:|failed|stopping every runner|aborted/.test(l))
      ?.replace('[k6-distributed] ', '')
      .slice(0, 160) ?? ''
  );
}

/**
 * The fields where the two answers differ. Every field k6 gave is compared; fields only the
 * product gave (its error line) are shown only when something else differs.
 */
export function compareFields(k6: Fields, product: Fields): FieldDiff[] {
  const diffs: FieldDiff[] = [];
  for (const [field, value] of k6) {
    const other = product.get(field) ?? '(absent)';
    if (other !== value) diffs.push({ field, k6: value, product: other });
  }
  for (const [field, value] of product) {
    if (!k6.has(field) && field.startsWith('threshold '))
      diffs.push({ field, k6: '(absent)', product: value });
  }
  if (diffs.length > 0 && product.has('product error'))
    diffs.push({ field: 'product error', k6: '', product: product.get('product error')! });
  return diffs;
}

/** One row of the equivalence table. */
export interface EquivalenceRow {
  name: string;
  covers: string;
  runners: number;
  fields: number;
  diffs: FieldDiff[];
  knownFailing?: string;
}

/** Renders the table as markdown: one line per case and runner count, then every difference. */
export function renderTable(rows: readonly EquivalenceRow[], header: string): string {
  const esc = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ').slice(0, 200);
  const lines = [
    header,
    '',
    '| case | covers | N | fields compared | differences | known failing (issue #9 row) |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${esc(r.covers)} | ${r.runners} | ${r.fields} | ${r.diffs.length} | ${r.knownFailing ? esc(r.knownFailing) : ''} |`,
    ),
    '',
    '## Differences',
    '',
    '| case | N | field | k6 | product |',
    '|---|---|---|---|---|',
    ...rows.flatMap((r) =>
      r.diffs.map((d) => `| ${r.name} | ${r.runners} | ${esc(d.field)} | ${esc(d.k6)} | ${esc(d.product)} |`),
    ),
  ];
  return `${lines.join('\n')}\n`;
}
