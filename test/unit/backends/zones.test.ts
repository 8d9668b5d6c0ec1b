import { describe, expect, it } from 'vitest';
import type { Runner, ScheduledStart, StartOptions } from '../../../src/backends/backend.ts';
import { type ZoneBackend, ZonedBackend } from '../../../src/backends/zones.ts';
import { ConfigurationError } from '../../../src/errors.ts';
import type { RunPlan } from '../../../src/plan.ts';
import { planRun } from '../../../src/run/plan.ts';
import { recordingLogger } from '../run/support/fakes.ts';

// The zones' backends are fakes here (the orchestration of several backends, in milliseconds);
// test/kubernetes/zones.test.ts runs the same over two real clusters.

/** A zone backend that records what it was asked; starts its runners `startedAt` (this clock). */
function fakeZone(
  name: string,
  o: { aheadMs?: number; leadMs?: number; firstAtMs?: number; failLaunch?: Error } = {},
) {
  const calls = { plans: [] as RunPlan[], starts: [] as StartOptions[], cleanups: 0 };
  const backend: ZoneBackend['backend'] = {
    preflight: async () => {
      if (o.failLaunch instanceof ConfigurationError) throw o.failLaunch;
    },
    launch: async (plan) => {
      calls.plans.push(plan);
      if (o.failLaunch) throw o.failLaunch;
      return plan.runners.map(
        (r): Runner => ({
          index: r.index,
          api: {} as Runner['api'],
          exited: Promise.resolve({ code: null, reason: 'its node is gone' }),
          kill: async () => {},
          terminate: async () => {},
          collect: async () => ({ logTail: '', unreadable: 'the log could not be read' }),
        }),
      );
    },
    startAll: async (runners, options): Promise<ScheduledStart> => {
      calls.starts.push(options);
      return {
        startedAtMs: options.atMs!,
        offsetsMs: runners.map((_, i) => i * 2),
        confirmedSpreadMs: 5,
        firstAtMs: o.firstAtMs ?? options.atMs!,
      };
    },
    startLeadMs: () => o.leadMs ?? 200,
    clockAheadMs: () => o.aheadMs ?? 0,
    cleanup: async () => {
      calls.cleanups++;
    },
  };
  return { zone: { name, backend }, calls };
}

const plan = () =>
  planRun({
    runners: 1,
    maxVUs: 100,
    zones: [
      { name: 'eu', share: 70, runners: 3 },
      { name: 'us', share: 30, runners: 2 },
    ],
  });

describe('zoned backend', () => {
  it("gives each zone its runners numbered from 0, and returns the run's numbering", async () => {
    const eu = fakeZone('eu');
    const us = fakeZone('us');
    const runners = await new ZonedBackend([eu.zone, us.zone], recordingLogger()).launch(plan(), 'a.tar', 60);
    expect(runners.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(us.calls.plans[0]!.runners).toEqual([
      { index: 0, runIndex: 3, segment: '7/10:17/20', zone: 'us' },
      { index: 1, runIndex: 4, segment: '17/20:1', zone: 'us' },
    ]);
    expect(eu.calls.plans[0]!.runners.map((r) => r.runIndex)).toEqual([0, 1, 2]);
    // A runner's failure names its zone.
    expect((await runners[3]!.exited).reason).toBe('zone "us": its node is gone');
    expect((await runners[0]!.collect()).unreadable).toBe('zone "eu": the log could not be read');
  });

  it('starts every zone at one instant and puts their starts on one time line', async () => {
    const now = 1_000_000;
    const eu = fakeZone('eu', { leadMs: 150, firstAtMs: now + 400 });
    const us = fakeZone('us', { leadMs: 300, firstAtMs: now + 403 });
    const backend = new ZonedBackend([eu.zone, us.zone], recordingLogger(), () => now);
    const runners = await backend.launch(plan(), 'a.tar');
    const start = await backend.startAll(runners, { earliestEndS: 5 });
    // The longest lead of the zones, for both.
    expect(eu.calls.starts[0]).toEqual({ earliestEndS: 5, atMs: now + 300 });
    expect(us.calls.starts[0]).toEqual({ earliestEndS: 5, atMs: now + 300 });
    expect(start!.offsetsMs).toEqual([0, 2, 4, 3, 5]);
    expect(start!.firstAtMs).toBe(now + 400);
  });

  it("warns when the zones' clocks look further apart than the skew target", async () => {
    const log = recordingLogger();
    const backend = new ZonedBackend(
      [fakeZone('eu', { aheadMs: 10 }).zone, fakeZone('us', { aheadMs: 130 }).zone],
      log,
    );
    await backend.startAll(await backend.launch(plan(), 'a.tar'), { earliestEndS: 0 });
    expect(log.lines.join('\n')).toMatch(/the nodes of zone "us" look 120 ms behind those of zone "eu"/);
  });

  it('names the zone that failed, and cleans up every zone', async () => {
    const eu = fakeZone('eu');
    const us = fakeZone('us', { failLaunch: new Error('creating the runners in namespace x failed (403)') });
    const backend = new ZonedBackend([eu.zone, us.zone], recordingLogger());
    await expect(backend.launch(plan(), 'a.tar')).rejects.toThrow(
      /^zone "us": creating the runners in namespace x failed \(403\)$/,
    );
    expect(eu.calls.plans).toHaveLength(1);
    await backend.cleanup();
    expect([eu.calls.cleanups, us.calls.cleanups]).toEqual([1, 1]);
  });

  it('keeps a configuration error a configuration error, named by zone', async () => {
    const us = fakeZone('us', { failLaunch: new ConfigurationError('namespace x: cannot create pods') });
    const error = await new ZonedBackend([fakeZone('eu').zone, us.zone], recordingLogger())
      .preflight()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe('zone "us": namespace x: cannot create pods');
  });
});
