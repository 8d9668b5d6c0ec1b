import { describe, expect, it } from 'vitest';
import { runDistributed } from '../../../src/run/index.ts';
import { LIFETIME_MARGIN_S, runLifetimeS } from '../../../src/run/launch.ts';
import { FakeBackend, FakeClock, fakePlan, fakePreflight, recordingLogger } from './support/fakes.ts';

const lifecycle = { noSetup: false, noTeardown: false, setupTimeoutS: 60, teardownTimeoutS: 60 };

describe("a run's lifetime", () => {
  it('adds every stage at its limit: start timeout, setup, totalDuration, grace, teardown, stop, and a margin', () => {
    const times = { startTimeoutS: 300, totalDurationS: 30.5, graceS: 120, stopTimeoutS: 30 };
    expect(runLifetimeS({ ...times, lifecycle })).toBe(
      Math.ceil(300 + 60 + 30.5 + 120 + 60 + 30 + LIFETIME_MARGIN_S),
    );
    // setup() and teardown() skipped count nothing.
    expect(runLifetimeS({ ...times, lifecycle: { ...lifecycle, noSetup: true, noTeardown: true } })).toBe(
      Math.ceil(300 + 30.5 + 120 + 30 + LIFETIME_MARGIN_S),
    );
  });

  it('is given to the backend at launch, from the run options and what the preflight learnt', async () => {
    const clock = new FakeClock();
    const backend = new FakeBackend([{}], clock);
    const given: Array<number | undefined> = [];
    const launch = backend.launch.bind(backend);
    backend.launch = async (...args: unknown[]) => {
      given.push(args[2] as number | undefined);
      return launch();
    };
    await runDistributed({
      script: 's.js',
      preflight: fakePreflight(10),
      plan: fakePlan(1),
      backend,
      log: recordingLogger(),
      clock,
      startTimeoutS: 20,
      graceS: 5,
      stopTimeoutS: 3,
    });
    // k6's default setupTimeout and teardownTimeout (60 s each): the fake preflight's options set neither.
    expect(given).toEqual([20 + 60 + 10 + 5 + 60 + 3 + LIFETIME_MARGIN_S]);
  });
});
