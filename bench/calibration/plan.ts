import { parseArgs } from 'node:util';

/**
 * The calibration bench's flags and its run order. A cell is one target shape at one service-time
 * factor (`mixed×1.10`), or the saturated cell; every cell gets `runs` real product runs.
 */

export type Shape = 'mixed' | 'cpu';
export const SHAPES: readonly Shape[] = ['mixed', 'cpu'];

/** One cell of the grid. */
export interface Cell {
  /** `mixed×1.10`, `cpu×1.00`, `saturated` */
  id: string;
  shape: Shape;
  /** Service-time factor (1 = the A side). */
  factor: number;
  /** k6 `maxVUs` of the whole test. */
  maxVUs: number;
  saturated: boolean;
}

/** The parsed flags. */
export interface Plan {
  runs: number;
  durationS: number;
  rate: number;
  shapes: Shape[];
  factors: number[];
  /** Shape of the saturated cell, or undefined for none. */
  saturatedShape?: Shape;
  saturatedMaxVUs: number;
  maxVUs: number;
  /** Window of the per-window p95 (s). */
  windowS: number;
  /** A/B rounds per paired trial (K). */
  abRounds: number;
  /** Synthetic pairs per bootstrap figure. */
  bootstrap: number;
  /** Runs' data folder (default: a new one under os.tmpdir()). */
  dataDir?: string;
  /** Re-judge the stored runs of this folder (or compact runs file) without running anything. */
  judgeOnly?: string;
  /** A noisy neighbour's CPU, fraction of one core (bench/calibration/load.ts); 0 for none. */
  backgroundLoad: number;
  /** Written in the md heading, e.g. `small-scale`. */
  label?: string;
  /** Output name under bench/results (default `calibration`). */
  out: string;
}

const USAGE = `node bench/calibration.ts [--runs 30] [--duration 60] [--rate 100] [--shapes mixed,cpu]
  [--factors 1,1.05,1.1,1.2] [--saturated mixed|none] [--saturated-max-vus 2] [--max-vus 40]
  [--window <s>] [--ab-rounds 6] [--background-load 0.5] [--bootstrap 2000] [--data-dir <dir>] [--label <text>] [--out calibration]
  [--judge-only <data dir | calibration-runs.json>]`;

function num(flag: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min) throw new Error(`--${flag} must be a number ≥ ${min}, got "${raw}"`);
  return v;
}

/** Parses argv (without node and the script). Throws a one-line error naming the flag. */
export function parsePlan(argv: string[]): Plan {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      duration: { type: 'string' },
      rate: { type: 'string' },
      shapes: { type: 'string' },
      factors: { type: 'string' },
      saturated: { type: 'string' },
      'saturated-max-vus': { type: 'string' },
      'max-vus': { type: 'string' },
      window: { type: 'string' },
      'ab-rounds': { type: 'string' },
      bootstrap: { type: 'string' },
      'background-load': { type: 'string' },
      'data-dir': { type: 'string' },
      'judge-only': { type: 'string' },
      label: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (v.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const shapes = (v.shapes ?? 'mixed,cpu').split(',').map((s) => s.trim());
  for (const s of shapes)
    if (!SHAPES.includes(s as Shape)) throw new Error(`--shapes: unknown shape "${s}" (mixed, cpu)`);
  const factors = (v.factors ?? '1,1.05,1.1,1.2').split(',').map((f) => num('factors', f.trim(), 1, 0.1));
  if (factors[0] !== 1) throw new Error('--factors must start with 1 (the A side)');
  const sat = v.saturated ?? 'mixed';
  if (sat !== 'none' && !SHAPES.includes(sat as Shape))
    throw new Error(`--saturated: "${sat}" is not mixed, cpu or none`);
  const durationS = num('duration', v.duration, 60, 2);
  return {
    runs: num('runs', v.runs, 30, 2),
    durationS,
    rate: num('rate', v.rate, 100, 1),
    shapes: shapes as Shape[],
    factors,
    ...(sat === 'none' ? {} : { saturatedShape: sat as Shape }),
    saturatedMaxVUs: num('saturated-max-vus', v['saturated-max-vus'], 2, 1),
    maxVUs: num('max-vus', v['max-vus'], 40, 1),
    windowS: num('window', v.window, Math.max(1, Math.round(durationS / 30)), 1),
    abRounds: num('ab-rounds', v['ab-rounds'], 6, 2),
    bootstrap: num('bootstrap', v.bootstrap, 2000, 100),
    backgroundLoad: Math.min(1, num('background-load', v['background-load'], 0.5, 0)),
    ...(v['data-dir'] ? { dataDir: v['data-dir'] } : {}),
    ...(v['judge-only'] ? { judgeOnly: v['judge-only'] } : {}),
    ...(v.label ? { label: v.label } : {}),
    out: v.out ?? 'calibration',
  };
}

export const factorLabel = (f: number): string => f.toFixed(2);

/** The cells: every shape × factor, then the saturated cell. */
export function cells(
  plan: Pick<Plan, 'shapes' | 'factors' | 'saturatedShape' | 'saturatedMaxVUs' | 'maxVUs'>,
): Cell[] {
  const out: Cell[] = plan.shapes.flatMap((shape) =>
    plan.factors.map((factor) => ({
      id: `${shape}×${factorLabel(factor)}`,
      shape,
      factor,
      maxVUs: plan.maxVUs,
      saturated: false,
    })),
  );
  if (plan.saturatedShape)
    out.push({
      id: 'saturated',
      shape: plan.saturatedShape,
      factor: 1,
      maxVUs: plan.saturatedMaxVUs,
      saturated: true,
    });
  return out;
}

/**
 * The run order: round r runs every cell once, forward in even rounds and backward in odd ones
 * (A B C D D C B A …), so that a drift of the machine over time reaches every cell alike, and the
 * A and B runs of one shape sit in ABBA blocks across rounds.
 */
export function schedule(all: Cell[], runs: number): Array<{ cell: Cell; round: number }> {
  const order: Array<{ cell: Cell; round: number }> = [];
  for (let round = 0; round < runs; round++)
    for (const cell of round % 2 === 0 ? all : [...all].reverse()) order.push({ cell, round });
  return order;
}
