import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { RunResult } from '../../src/result/schema.ts';
import type { Cell } from './plan.ts';
import { calibrationScript } from './script.ts';

/**
 * One calibration run: a real product run (`src/cli/bin.ts run`, local backend, 2 runners, real
 * k6), its full result JSON kept in the data folder, and the record the judges read.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The percentiles kept per window, besides min and max (script.ts asks k6 for those it lacks by default). */
export const WINDOW_PERCENTILES = [50, 75, 90, 95, 97, 98, 99, 99.9];

/** One window of a run: [count, min, …the WINDOW_PERCENTILES in order…, max], latency in ms. */
export type WindowStats = number[];

/** A stored run: where it sits in the grid and its result. */
export interface RunRecord {
  /** Position in the run order (0-based). */
  seq: number;
  cell: string;
  shape: string;
  factor: number;
  saturated: boolean;
  round: number;
  /** The result without its window submetrics, window thresholds, k6 summary and unjudged metrics (what the judges read). */
  result: RunResult;
  /** Per-window latency, in time order (from the `http_req_duration{w:N}` submetrics). */
  windows: WindowStats[];
  /** The machine's 1-minute load average when the run ended (os.loadavg; 2 cores here). */
  load1?: number;
  /** The full result file, when run in this data folder. */
  file?: string;
}

const WINDOW_KEY = /^http_req_duration\{w:(\d+)\}$/;

/**
 * k6 metrics no judge reads (the key metrics are http_reqs, http_req_duration, http_req_failed and
 * checks): left out of the record, so that the compact runs file of a full bench stays under 2 MB.
 */
const UNJUDGED = new Set([
  'data_received',
  'data_sent',
  'http_req_blocked',
  'http_req_connecting',
  'http_req_receiving',
  'http_req_sending',
  'http_req_tls_handshaking',
  'http_req_waiting',
  'iteration_duration',
]);

/** Splits a full result into the judged result and its windows. */
export function toRecord(full: RunResult, at: Omit<RunRecord, 'result' | 'windows'>): RunRecord {
  const windows: Array<[number, WindowStats]> = [];
  const metrics: RunResult['metrics'] = {};
  for (const [key, m] of Object.entries(full.metrics)) {
    const w = WINDOW_KEY.exec(key);
    if (!w) {
      if (!UNJUDGED.has(key)) metrics[key] = m;
      continue;
    }
    const v = m.values;
    const stats = [v.count, v.min, ...WINDOW_PERCENTILES.map((p) => v[`p(${p})`]), v.max];
    if (stats.every((x) => typeof x === 'number'))
      windows.push([Number(w[1]), (stats as number[]).map((x) => Math.round(x * 1e4) / 1e4)]);
  }
  const { summary: _s, thresholds: _t, ...rest } = full as RunResult & { summary?: unknown };
  return {
    ...at,
    result: { ...rest, metrics, thresholds: [] } as unknown as RunResult,
    windows: windows.sort((a, b) => a[0] - b[0]).map(([, s]) => s),
  };
}

/** Options of one run. */
export interface RunOptions {
  dataDir: string;
  targetUrl: string;
  rate: number;
  durationS: number;
  windowS: number;
}

/** Runs one cell once through the CLI and returns its record. Throws when no result was written. */
export async function runOnce(cell: Cell, seq: number, round: number, o: RunOptions): Promise<RunRecord> {
  const script = path.join(o.dataDir, `${cell.shape}-${cell.maxVUs}.js`);
  if (!existsSync(script))
    writeFileSync(
      script,
      calibrationScript({
        shape: cell.shape,
        rate: o.rate,
        durationS: o.durationS,
        windowS: o.windowS,
        maxVUs: cell.maxVUs,
      }),
    );
  const file = path.join(o.dataDir, `run-${String(seq).padStart(4, '0')}.json`);
  const args = [path.join(ROOT, 'src/cli/bin.ts'), 'run', script, '-n', '2', '-o', file, '--no-html'];
  args.push('--', '-e', `TARGET=${o.targetUrl}`, '-e', `FACTOR=${cell.factor}`);
  try {
    await promisify(execFile)(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 });
  } catch {
    // a failed threshold or a saturated run still writes its result; a missing one throws below
  }
  if (!existsSync(file)) throw new Error(`run ${seq} (${cell.id}) wrote no result ${file}`);
  const full = JSON.parse(readFileSync(file, 'utf8')) as RunResult;
  return toRecord(full, {
    seq,
    cell: cell.id,
    shape: cell.shape,
    factor: cell.factor,
    saturated: cell.saturated,
    round,
    file,
  });
}

/** The index file of a data folder. */
export const INDEX = 'runs.json';

/** Every stored run of a data folder (its full results), or of a compact runs file. */
export function loadRuns(where: string): RunRecord[] {
  if (statSync(where).isFile())
    return (JSON.parse(readFileSync(where, 'utf8')) as { runs: RunRecord[] }).runs;
  const index = JSON.parse(readFileSync(path.join(where, INDEX), 'utf8')) as {
    runs: Array<Omit<RunRecord, 'result' | 'windows'>>;
  };
  return index.runs.map((r) => {
    const full = JSON.parse(readFileSync(path.join(where, path.basename(r.file ?? '')), 'utf8')) as RunResult;
    return toRecord(full, r);
  });
}

/** Writes the data folder's index (the records' grid positions; results stay in their files). */
export function saveIndex(dataDir: string, runs: RunRecord[], meta: object): void {
  writeFileSync(
    path.join(dataDir, INDEX),
    `${JSON.stringify({ plan: meta, runs: runs.map(({ result: _r, windows: _w, ...at }) => at) }, null, 1)}\n`,
  );
}

/** Figures read from a record for the tables (ms, req). */
export const p95Of = (r: RunRecord): number | undefined =>
  r.result.metrics['http_req_duration{expected_response:true}']?.values['p(95)'] ??
  r.result.metrics.http_req_duration?.values['p(95)'];
export const requestsOf = (r: RunRecord): number => r.result.metrics.http_reqs?.values.count ?? 0;
