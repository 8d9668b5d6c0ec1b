import { describe, expect, it } from 'vitest';
import { RUN_TAG, RUNNER_TAG, runnerArgs, ZONE_TAG } from '../../../src/plan.ts';
import { planRun } from '../../../src/run/plan.ts';

describe('run plan with load zones', () => {
  const zones = [
    { name: 'eu', share: 70, runners: 3 },
    { name: 'us', share: 30, runners: 2 },
  ];

  it('numbers the runners zone after zone, each with its zone and its share', () => {
    const plan = planRun({ runners: 1, maxVUs: 100, zones, runId: 'rabc' });
    expect(plan.runners.map((r) => [r.index, r.zone, r.segment])).toEqual([
      [0, 'eu', '0:7/30'],
      [1, 'eu', '7/30:7/15'],
      [2, 'eu', '7/15:7/10'],
      [3, 'us', '7/10:17/20'],
      [4, 'us', '17/20:1'],
    ]);
    expect(plan.sequence).toBe('0,7/30,7/15,7/10,17/20,1');
    expect(plan.zones).toEqual(zones);
    expect(plan.warnings).toEqual([]);
  });

  it("tags every sample with the runner's zone beside the run and runner tags", () => {
    const plan = planRun({
      runners: 1,
      maxVUs: 100,
      zones,
      runId: 'rabc',
      tags: { team: 'a' },
      userRunArgs: ['--out', 'json=raw-{runner}.json'],
    });
    const args = runnerArgs(plan, plan.runners[3]!, { archive: 'a.tar', address: '127.0.0.1:1' });
    expect(args).toEqual(
      expect.arrayContaining([
        '--tag',
        'team=a',
        `${RUN_TAG}=rabc`,
        `${RUNNER_TAG}=3`,
        `${ZONE_TAG}=us`,
        'json=raw-3.json',
      ]),
    );
    // A zone's backend numbers its runners from 0: the tags keep the run's numbering.
    const local = { ...plan.runners[3]!, index: 0, runIndex: 3 };
    const localArgs = runnerArgs(plan, local, { archive: 'a.tar', address: '127.0.0.1:1' });
    expect(localArgs).toEqual(expect.arrayContaining([`${RUNNER_TAG}=3`, 'json=raw-3.json']));
  });

  it('adds no zone tag without zones', () => {
    const plan = planRun({ runners: 2, maxVUs: 10 });
    expect(plan.zones).toBeUndefined();
    expect(runnerArgs(plan, plan.runners[0]!, { archive: 'a', address: 'b' }).join(' ')).not.toContain(
      ZONE_TAG,
    );
  });

  it('refuses shares that do not add up to 100, and warns of runners beyond the VUs', () => {
    expect(() => planRun({ runners: 1, maxVUs: 10, zones: [{ name: 'a', share: 60, runners: 1 }] })).toThrow(
      "zones: the zones' shares add up to 60, not 100",
    );
    expect(planRun({ runners: 1, maxVUs: 4, zones }).warnings[0]).toMatch(/5 runners .* at most 4 VUs/);
  });
});
