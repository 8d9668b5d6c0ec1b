import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import getPort from 'get-port';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { dashboardUrlFor } from '../../src/render/dashboard.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { ROOT } from '../docs/support/actions.ts';
import { runCli, tempDir, writeScript } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';

// examples/grafana-dashboard.json against a real Prometheus (Debian's prometheus, 2.42 on
// bookworm, which scripts/ensure-prometheus.sh installs when missing), started here on 127.0.0.1
// as a remote-write receiver with native histograms, fed by a real run of the CLI: 2 runners with
// k6's experimental-prometheus-rw output against a Node target. Every panel's query, with the
// variables filled as Grafana fills them from the link the job summary carries, returns data, and
// the figures the panels show are the result's.

interface Target {
  expr: string;
  refId: string;
  instant: boolean;
}
interface Panel {
  title: string;
  type: string;
  targets: Target[];
}
interface Variable {
  name: string;
  type: string;
  definition?: string;
  allValue?: string;
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

const DASHBOARD = JSON.parse(
  readFileSync(path.join(ROOT, 'examples/grafana-dashboard.json'), 'utf8'),
) as Dashboard;
const variable = (name: string) => DASHBOARD.templating.list.find((v) => v.name === name);
const panel = (title: string) => {
  const found = DASHBOARD.panels.find((p) => p.title === title);
  if (!found) throw new Error(`no panel "${title}"`);
  return found;
};

/** The README's `dashboard-url`, the address of the shipped dashboard as imported. */
const README_URL = /dashboard-url: (https:\S+)/.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))![1]!;

/** k6's remote-write push interval (its default): Grafana's data source scrape interval. */
const PUSH_S = 5;

let prometheus: { child: ChildProcess; url: string };
let target: RecordingTarget;
let result: RunResult;
/** The link's time range, in epoch seconds, and the run id it selects. */
let from: number;
let to: number;
let runId: string;

beforeAll(async () => {
  const out = execFileSync('bash', [path.join(ROOT, 'scripts/ensure-prometheus.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const binary = /^prometheus=(.+)$/m.exec(out)![1]!;
  const dir = tempDir('k6d-prometheus-');
  writeFileSync(path.join(dir, 'prometheus.yml'), 'global: {}\n'); // it scrapes nothing
  const port = await getPort({ host: '127.0.0.1' });
  const child = spawn(
    binary,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-remote-write-receiver',
      '--enable-feature=native-histograms',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (d) => {
    log += d;
  });
  prometheus = { child, url: `http://127.0.0.1:${port}` };
  let ready = false;
  const poll = setInterval(() => {
    fetch(`${prometheus.url}/-/ready`)
      .then((r) => {
        ready = r.ok;
      })
      .catch(() => {});
  }, 200);
  try {
    await waitFor(() => ready || child.exitCode !== null, 'Prometheus ready', { timeoutMs: 60_000 });
  } finally {
    clearInterval(poll);
  }
  if (!ready) throw new Error(`Prometheus exited (${child.exitCode}): ${log}`);

  target = await startNodeTarget();
  // A tenth of the requests fail (http_req_failed, a failed check); two request names.
  const script = writeScript(`
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: { rps: { executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s', duration: '12s', preAllocatedVUs: 8 } },
};
export default function () {
  const failing = __ITER % 10 === 9;
  const res = http.get(__ENV.TARGET + (failing ? '/status/500' : __ITER % 2 ? '/api/items' : '/hello'));
  check(res, { 'status is 200': (r) => r.status === 200 });
}
`);
  const run = await runCli(
    ['run', script, '-n', '2', '--', '--out', 'experimental-prometheus-rw', '-e', `TARGET=${target.url}`],
    {
      env: {
        K6_PROMETHEUS_RW_SERVER_URL: `${prometheus.url}/api/v1/write`,
        K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true',
        K6_PROMETHEUS_RW_PUSH_INTERVAL: `${PUSH_S}s`,
      },
    },
  );
  if (run.code !== 0 || !run.result) throw new Error(`the run failed (${run.code}): ${run.stderr}`);
  result = run.result;
  // The range and the run the job summary's link opens the dashboard with.
  const link = new URL(
    dashboardUrlFor(`https://grafana.example.com/d/${DASHBOARD.uid}/k6-distributed`, result),
  );
  from = Number(link.searchParams.get('from')) / 1000;
  to = Number(link.searchParams.get('to')) / 1000;
  runId = link.searchParams.get('var-k6d_run')!;
}, 300_000);

afterAll(async () => {
  await target?.stop();
  const child = prometheus?.child;
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});

interface Series {
  metric: Record<string, string>;
  value?: [number, string];
  values?: Array<[number, string]>;
}

/**
 * A panel query as Grafana sends it for the link's range: the variables filled (`$k6d_runner`
 * All is its allValue), `$__range` the range, `$__interval` the step, `$__rate_interval` Grafana's
 * max($__interval + scrape interval, 4 × scrape interval) with the data source's scrape interval
 * set to k6's push interval. A stat or table panel's query is instant, at the range's end.
 */
async function query(t: Pick<Target, 'expr' | 'instant'>, runner?: string): Promise<Series[]> {
  const step = 1;
  const expr = t.expr
    .replaceAll('$k6d_runner', runner ?? variable('k6d_runner')!.allValue!)
    .replaceAll('$k6d_run', runId)
    .replaceAll('$__rate_interval', `${Math.max(step + PUSH_S, 4 * PUSH_S)}s`)
    .replaceAll('$__range', `${Math.round((to - from) * 1000)}ms`)
    .replaceAll('$__interval', `${step}s`);
  expect(expr, 'every variable is filled').not.toMatch(/\$/);
  const params = t.instant
    ? new URLSearchParams({ query: expr, time: String(to) })
    : new URLSearchParams({ query: expr, start: String(from), end: String(to), step: String(step) });
  const res = await fetch(`${prometheus.url}/api/v1/${t.instant ? 'query' : 'query_range'}`, {
    method: 'POST',
    body: params,
  });
  const body = (await res.json()) as { status: string; error?: string; data: { result: Series[] } };
  expect(body.status, `${expr}: ${body.error}`).toBe('success');
  return body.data.result;
}

/** The numbers of a query's answer (every point of every series), NaN and infinities left out. */
const numbers = (series: Series[]) =>
  series
    .flatMap((s) => (s.value ? [s.value] : (s.values ?? [])))
    .map(([, v]) => Number(v))
    .filter(Number.isFinite);

/** A stat panel's one number. */
async function stat(title: string, runner?: string): Promise<number> {
  const series = await query(panel(title).targets[0]!, runner);
  expect(series, title).toHaveLength(1);
  return numbers(series)[0]!;
}

describe('examples/grafana-dashboard.json', () => {
  it('has the variables the job summary link fills, and every panel query selects by them', () => {
    expect(new URL(README_URL).pathname).toBe(`/d/${DASHBOARD.uid}`);
    const link = new URL(dashboardUrlFor(README_URL, result));
    const filled = [...link.searchParams.keys()].filter((k) => k.startsWith('var-')).map((k) => k.slice(4));
    expect(filled).toEqual(['k6d_run']);
    for (const name of [...filled, 'k6d_runner']) {
      expect(variable(name)?.type, name).toBe('query');
      expect(variable(name)?.definition, name).toMatch(new RegExp(`^label_values\\(.*, ${name}\\)$`));
    }
    const targets = DASHBOARD.panels.flatMap((p) => p.targets);
    expect(targets.length).toBeGreaterThanOrEqual(10);
    for (const t of targets) {
      // Every selector narrows to the run and the chosen runners.
      const selectors = t.expr.match(/k6_\w+\{[^}]*\}/g) ?? [];
      expect(selectors.length, t.expr).toBeGreaterThan(0);
      expect(t.expr.match(/k6_\w+/g)!.length, `${t.expr}: a metric without a selector`).toBe(
        selectors.length,
      );
      for (const s of selectors) expect(s, t.expr).toContain('k6d_run="$k6d_run", k6d_runner=~"$k6d_runner"');
    }
    expect(result.runId).toBe(runId);
  });

  it.each(DASHBOARD.panels.flatMap((p) => p.targets.map((t) => [p.title, t.refId, t] as const)))(
    'panel "%s" query %s returns data for the run',
    async (_title, _ref, t) => {
      const series = await query(t);
      expect(series.length, t.expr).toBeGreaterThan(0);
      expect(numbers(series).length, t.expr).toBeGreaterThan(0);
    },
  );

  it('shows the result: requests, iterations, VUs, failed requests, checks, p95', async () => {
    const m = result.metrics;
    const requests = m.http_reqs!.values.count!;
    expect(requests).toBeGreaterThan(400);
    const counted = await stat('HTTP requests');
    expect(counted).toBe(requests);
    expect(await stat('Iterations')).toBe(m.iterations!.values.count);
    expect(await stat('VUs max')).toBe(m.vus_max!.values.value);
    expect(await stat('Failed requests (http_req_failed)')).toBeCloseTo(m.http_req_failed!.values.rate!, 10);
    expect(await stat('Checks passed')).toBeCloseTo(m.checks!.values.rate!, 2);
    // One row per check, not one per runner.
    const checks = await query(panel('Checks').targets[0]!);
    expect(checks.map((s) => s.metric.check)).toEqual(['status is 200']);
    // A native histogram's buckets are 2^(1/8) wide (schema 3, 9%): the quantile is in the exact
    // one's bucket; a little more for the result's own merge of the runners' quantiles.
    const p95 = (await stat('p95 http_req_duration (expected responses)')) * 1000;
    const exact = m['http_req_duration{expected_response:true}']!.values['p(95)']!;
    expect(Math.abs(p95 / exact - 1), `${p95} ms vs ${exact} ms`).toBeLessThan(0.12);
    console.log(
      `Prometheus: ${counted} requests (result ${requests}), p95 ${p95.toFixed(3)} ms (result ${exact.toFixed(3)} ms)`,
    );
  });

  it('narrows to one runner: its own requests', async () => {
    for (const r of result.runners) expect(await stat('HTTP requests', String(r.index))).toBe(r.requests);
  });
});
