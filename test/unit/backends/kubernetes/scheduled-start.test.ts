import { describe, expect, it } from 'vitest';
import type { Runner } from '../../../../src/backends/backend.ts';
import { BarrierLog } from '../../../../src/backends/kubernetes/barrier/log.ts';
import {
  type Mailbox,
  mailboxOf,
  START_CONFIRM_MS,
  type StartDeps,
  scheduledStart,
  startLeadMs,
} from '../../../../src/backends/kubernetes/scheduled-start.ts';
import { K6_STATUS } from '../../../../src/k6/rest.ts';
import { FakeBackendClock, settle, T0 } from './support/fakes.ts';

describe('the lead of a scheduled start', () => {
  it("is half the slowest confirmation's round trip, the mailbox poll and a margin, within 150 ms and 5 s", () => {
    expect(startLeadMs(400)).toBe(350);
    // A fast API server: the least lead still covers the barrier's mailbox poll.
    expect(startLeadMs(0)).toBe(150);
    // A saturated one: never more than 5 s.
    expect(startLeadMs(20_000)).toBe(5_000);
  });

  it("moves this machine's clock to the nodes' and tells the barriers when the test can first end", () => {
    // This clock is at most 250 ms ahead of the nodes': the instant is 350 ms from now by theirs.
    expect(mailboxOf(T0, 250, 350, 10)).toEqual({ startAt: T0 + 100, endsFrom: T0 + 100 + 10_000 - 100 });
    // A test that may end at any time: no endsFrom.
    expect(mailboxOf(T0 + 0.4, -20.2, 150, 0)).toEqual({ startAt: T0 + 171 });
  });
});

const PAUSED = {
  status: K6_STATUS.PausedBeforeRun,
  paused: true,
  running: false,
  stopped: false,
  vus: 0,
  vusMax: 0,
  tainted: false,
};

/** A scheduled start of runners whose barrier logs read `ready` lines with these node times (at T0). */
function setup(readyAtNodeMs: number[], nodes: string[] = readyAtNodeMs.map((_, i) => `node-${i}`)) {
  const clock = new FakeBackendClock();
  const listeners = new Set<() => void>();
  const logs = readyAtNodeMs.map((at) => {
    const log = new BarrierLog(() => {
      for (const l of listeners) l();
    }, clock);
    log.feed(`k6d-ready ${at}\n`);
    return log;
  });
  const runners = readyAtNodeMs.map((_, index) => ({ index, exited: new Promise(() => {}) }) as Runner);
  const warnings: string[] = [];
  const debug: string[] = [];
  const mailboxes = new Map<number, Mailbox>();
  const started = new Map<number, number>();
  const proxiedStarts: Array<{ index: number; atMs: number }> = [];
  const statusOf = new Map<number, number>();
  const refuse = new Set<number>();
  const deps: StartDeps = {
    clock,
    log: { debug: (m) => debug.push(m), warning: (m) => warnings.push(m) },
    slowestConfirmMs: 400,
    nodeOf: (index) => nodes[index],
    setMailbox: async (index, mailbox) => {
      if (refuse.has(index)) throw new Error('PUT /v1/setup: HTTP 500');
      mailboxes.set(index, mailbox);
    },
    proxied: (index) => ({
      status: async () => ({ ...PAUSED, status: statusOf.get(index) ?? K6_STATUS.PausedBeforeRun }),
      start: async () => {
        proxiedStarts.push({ index, atMs: clock.now() });
        return { ...PAUSED, status: K6_STATUS.Running, paused: false, running: true };
      },
    }),
    markStarted: (index, inMs) => started.set(index, inMs),
    exited: () => false,
    onBarrierChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { clock, logs, runners, deps, warnings, debug, mailboxes, started, proxiedStarts, statusOf, refuse };
}

describe('a scheduled start', () => {
  it("starts at the instant given for several backends (load zones), moved to the nodes' clock", async () => {
    const s = setup([T0 - 250, T0 - 250]);
    // 900 ms from now by this clock: 250 ms earlier by the nodes' clock.
    const start = scheduledStart(s.deps, s.runners, s.logs, { earliestEndS: 0, atMs: T0 + 900 });
    await settle();
    expect(s.mailboxes.get(0)).toEqual({ startAt: T0 + 650 });
    expect(s.mailboxes.get(1)).toEqual({ startAt: T0 + 650 });
    await s.clock.advance(910);
    s.logs[0]!.feed(`k6d-started ${T0 + 650} ${T0 + 652}\n`);
    s.logs[1]!.feed(`k6d-started ${T0 + 652} ${T0 + 655}\n`);
    const result = await start;
    expect(result.firstAtMs).toBe(T0 + 900);
    expect(result.offsetsMs).toEqual([0, 2]);
  });

  it("gives every barrier one instant of the nodes' clock and reads the offsets from their started lines", async () => {
    // Runner 0's ready line came 300 ms after its node time, runner 1's 250 ms: the least bound counts.
    const s = setup([T0 - 300, T0 - 250]);
    const start = scheduledStart(s.deps, s.runners, s.logs, { earliestEndS: 10 });
    await settle();
    const mailbox = { startAt: T0 + 100, endsFrom: T0 + 10_000 };
    expect(s.mailboxes.get(0)).toEqual(mailbox);
    expect(s.mailboxes.get(1)).toEqual(mailbox);
    // Both marked as started, 350 ms ahead (their k6 logs are followed from shortly after).
    expect([...s.started]).toEqual([
      [0, 350],
      [1, 350],
    ]);
    expect(s.debug[0]).toContain(
      '(in 350 ms; this clock is at most 250 ms ahead; slowest confirmation 400 ms)',
    );
    await s.clock.advance(360);
    s.logs[0]!.feed(`k6d-started ${T0 + 100} ${T0 + 103}\n`);
    s.logs[1]!.feed(`k6d-started ${T0 + 101} ${T0 + 106}\n`);
    const result = await start;
    expect(result).toEqual({
      // The instant read back into this clock: 250 ms after it by the nodes' clock.
      startedAtMs: T0 + 350,
      offsetsMs: [0, 1],
      confirmedSpreadMs: 3,
      // The first un-pause (T0 + 100 of the nodes' clock) in this clock.
      firstAtMs: T0 + 350,
    });
    expect(s.proxiedStarts).toEqual([]);
    expect(s.warnings).toEqual([]);
    // Nothing waits on after the start: no timer is left behind.
    expect(s.clock.pending).toBe(0);
  });

  it('starts a runner through the pod proxy at the instant when its start time cannot be set, and one whose line never comes after the confirmation time', async () => {
    const s = setup([T0 - 250, T0 - 250]);
    s.refuse.add(1);
    const result = await s.clock.runUntil(scheduledStart(s.deps, s.runners, s.logs, { earliestEndS: 0 }));
    expect(s.mailboxes.has(0)).toBe(true);
    expect(s.mailboxes.get(0)).toEqual({ startAt: T0 + 100 });
    // Runner 1 at the instant (T0 + 100 of the nodes' clock is T0 + 350 of this one), runner 0
    // START_CONFIRM_MS later.
    expect(s.proxiedStarts).toEqual([
      { index: 1, atMs: T0 + 350 },
      { index: 0, atMs: T0 + 350 + START_CONFIRM_MS },
    ]);
    expect(result.offsetsMs).toEqual([START_CONFIRM_MS, 0]);
    expect(s.debug).toContain('runner 1: no start time; started through the pod proxy');
    expect(s.debug).toContain('runner 0: no started line; started through the pod proxy');
  });

  it('does not start again a runner already running when its line did not come', async () => {
    const s = setup([T0 - 250]);
    s.statusOf.set(0, K6_STATUS.Running);
    await s.clock.runUntil(scheduledStart(s.deps, s.runners, s.logs, { earliestEndS: 0 }));
    expect(s.proxiedStarts).toEqual([]);
  });

  it("warns when the runners' node clocks look more than 2 s apart, naming the nodes and runners", async () => {
    // Runner 1's node is about 3 s behind runner 0's.
    const s = setup([T0 - 20, T0 - 3_020], ['n-a', 'n-b']);
    const start = scheduledStart(s.deps, s.runners, s.logs, { earliestEndS: 0 });
    await settle();
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toMatch(
      /^the runners' node clocks look at least 3000 ms apart \(node n-b of runner 1 behind node n-a of runner 0, by their barrier logs\)/,
    );
    s.logs[0]!.feed(`k6d-started ${T0 + 330} ${T0 + 331}\n`);
    s.logs[1]!.feed(`k6d-started ${T0 - 2_670} ${T0 - 2_669}\n`);
    await start;

    const near = setup([T0 - 20, T0 - 1_020]);
    void scheduledStart(near.deps, near.runners, near.logs, { earliestEndS: 0 });
    await settle();
    expect(near.warnings).toEqual([]);
  });
});
