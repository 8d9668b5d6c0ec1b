import { type Clock, realClock } from '../../../clock.ts';
import type { VusRecord } from '../../backend.ts';
import { BARRIER_LINE, VUS_PERIOD_MS } from './script.ts';

/**
 * How far apart the runners' node clocks are at least, from their barrier logs'
 * {@link BarrierLog.aheadMs} bounds: each bound is its node's offset from this machine's clock plus
 * the least delay of its lines, so a gap between two bounds larger than the delays is the clocks'.
 * @param aheadMs per runner, {@link BarrierLog.aheadMs} (ms).
 * @returns the largest gap (ms) and the runners at its ends: `behind`, whose node clock is the
 *   furthest behind (its bound the largest), and `ahead`.
 */
export function nodeClocksApart(aheadMs: readonly number[]): {
  gapMs: number;
  behind: number;
  ahead: number;
} {
  let behind = 0;
  let ahead = 0;
  for (let i = 1; i < aheadMs.length; i++) {
    if (aheadMs[i]! > aheadMs[behind]!) behind = i;
    if (aheadMs[i]! < aheadMs[ahead]!) ahead = i;
  }
  return { gapMs: (aheadMs[behind] ?? 0) - (aheadMs[ahead] ?? 0), behind, ahead };
}

/**
 * What a runner's barrier container has printed so far ({@link BARRIER_LINE}, barrier/script.ts), read
 * from its followed log. Other lines (k6's own warnings) are ignored; a line split between two
 * chunks is joined. A follow reads the log from its start, so a new follow starts with
 * {@link reset}.
 */
export class BarrierLog {
  /** Epoch ms (the node's clock) at which the runner was seen at status 4; undefined before. */
  readyAtMs: number | undefined;
  /**
   * How far this machine's clock is at most ahead of the node's, in ms (negative: behind): the
   * least, over the ready and clock lines, of when this machine read the line less the node time
   * in it (each line took some time to come). Undefined before the ready line.
   */
  aheadMs: number | undefined;
  /**
   * When the barrier container un-paused the runner itself at its start time (node clock, epoch
   * ms): `sentAtMs` just before its `PATCH`, `atMs` once k6 confirmed it; undefined before, and
   * when the runner was started otherwise.
   */
  started: { sentAtMs: number; atMs: number } | undefined;
  /** The end of the runner's test: when, and its status (9, 10 or 11); undefined before. */
  end: { atMs: number; status: number } | undefined;
  private changes: Array<{ atMs: number; vus: number }> = [];
  private partial = '';
  private readonly onChange: () => void;
  private readonly clock: Pick<Clock, 'now'>;

  /**
   * @param onChange called after a chunk that brought the ready, the started or the end line.
   * @param clock this machine's clock, which reads when each line came ({@link aheadMs}).
   */
  constructor(onChange: () => void = () => {}, clock: Pick<Clock, 'now'> = realClock) {
    this.onChange = onChange;
    this.clock = clock;
  }

  /** Forgets everything read: the next chunk is the log's start. */
  reset(): void {
    this.partial = '';
    this.changes = [];
  }

  /** Reads one chunk of the log. */
  feed(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop()!;
    const before = [this.readyAtMs, this.started, this.end];
    const now = this.clock.now();
    for (const line of lines) this.read(line.trimEnd(), now);
    if (before[0] !== this.readyAtMs || before[1] !== this.started || before[2] !== this.end) this.onChange();
  }

  /** The runner's VU record ({@link VusRecord}) once its test has ended with a sample; else undefined. */
  vusRecord(): VusRecord | undefined {
    if (!this.end || this.changes.length === 0) return undefined;
    return { changes: this.changes, endedAtMs: this.end.atMs, periodMs: VUS_PERIOD_MS };
  }

  private read(line: string, readAtMs: number): void {
    const [kind, ...fields] = line.split(' ');
    const numbers = fields.map(Number);
    if (numbers.length === 0 || !numbers.every(Number.isFinite)) return;
    const atMs = numbers[0]!;
    if ((kind === BARRIER_LINE.ready || kind === BARRIER_LINE.clock) && numbers.length === 1) {
      if (kind === BARRIER_LINE.ready) this.readyAtMs ??= atMs;
      this.aheadMs = Math.min(this.aheadMs ?? Number.POSITIVE_INFINITY, readAtMs - atMs);
    } else if (kind === BARRIER_LINE.started && numbers.length === 2)
      this.started ??= { sentAtMs: atMs, atMs: numbers[1]! };
    else if (kind === BARRIER_LINE.vus && numbers.length === 2) this.changes.push({ atMs, vus: numbers[1]! });
    else if (kind === BARRIER_LINE.end && numbers.length === 2) this.end ??= { atMs, status: numbers[1]! };
  }
}
