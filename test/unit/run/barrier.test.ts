import { describe, expect, it } from 'vitest';
import type { Runner } from '../../../src/backends/backend.ts';
import { K6_STATUS } from '../../../src/k6/rest.ts';
import type { RunnerExit } from '../../../src/plan.ts';
import { barrier } from '../../../src/run/barrier.ts';
import { FakeClock, recordingLogger, status } from './support/fakes.ts';

/** A runner whose status answers say it initialises; `ready()` is what its backend already knows. */
function initialising(index: number, ready?: () => boolean): Runner {
  return {
    index,
    api: { status: async () => status(K6_STATUS.InitVUs) } as never,
    exited: new Promise<RunnerExit>(() => {}),
    kill: async () => {},
    terminate: async () => {},
    collect: async () => ({ logTail: '' }),
    ...(ready ? { ready } : {}),
  };
}

describe('the barrier', () => {
  it('counts the runners its backend knows are ready, while their confirmation waits for the others', async () => {
    // 9 runners on 8 nodes: 8 ready (their barrier logs said so), one unschedulable.
    const runners = Array.from({ length: 9 }, (_, i) => initialising(i, () => i < 8));
    const log = recordingLogger();
    const waiting = barrier(
      { runners, exits: runners.map(() => undefined) },
      { startTimeoutS: 25, clock: new FakeClock(), log },
    );
    await expect(waiting).rejects.toThrow(/runners not ready after 25 s/);
    expect(log.lines.filter((l) => l.includes('waiting for runners'))).toEqual([
      'info: waiting for runners: 8/9 ready',
      'info: waiting for runners: 8/9 ready',
    ]);
  });
});
