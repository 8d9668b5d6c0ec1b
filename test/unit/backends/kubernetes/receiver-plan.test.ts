import { describe, expect, it } from 'vitest';
import { receiverPlan } from '../../../../src/backends/kubernetes/receiver/plan.ts';
import { planRun } from '../../../../src/run/plan.ts';
import { recordingLogger } from '../../run/support/fakes.ts';

describe("the interval receiver's plan", () => {
  const plan = {
    ...planRun({ runners: 1, maxVUs: 1 }),
    intervalMetrics: { url: 'http://127.0.0.1', pushIntervalMs: 100 },
  };

  it('with an image, keeps the pushes and gives the program, bundled from the sources here', async () => {
    const got = await receiverPlan(plan, { receiverImage: 'node:24-slim', log: recordingLogger() });
    expect(got.plan).toBe(plan);
    expect(got.receiverScript).toContain('k6d-iv-end');
  });

  it('without one (or without pushes), leaves both out: nobody would take the pushes', async () => {
    expect(await receiverPlan(plan, { log: recordingLogger() })).toEqual({
      plan: { ...plan, intervalMetrics: undefined },
    });
    const quiet = { ...plan, intervalMetrics: undefined };
    expect(await receiverPlan(quiet, { receiverImage: 'node:24-slim', log: recordingLogger() })).toEqual({
      plan: quiet,
    });
  });
});
