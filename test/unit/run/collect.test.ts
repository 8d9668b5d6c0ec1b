import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectAll } from '../../../src/run/collect.ts';
import { FakeBackend, FakeClock } from './support/fakes.ts';

/** Two ended fake runners that left no summary (their folder is gone). */
async function runnersWithoutSummaries() {
  const backend = new FakeBackend([{ summary: null }, { summary: null }], new FakeClock());
  const runners = await backend.launch();
  await backend.cleanup();
  return runners;
}

describe('collect', () => {
  it('says in one line that the work folder was removed during the run (issue 25)', async () => {
    const workDir = mkdtempSync(path.join(os.tmpdir(), 'k6-distributed-'));
    rmSync(workDir, { recursive: true });
    const collected = await collectAll(await runnersWithoutSummaries(), workDir);
    expect(collected.failures).toEqual([
      {
        kind: 'incomplete',
        message: `the work folder ${workDir} was removed during the run (a tmp cleaner?): the runners' summaries were in it; runner 0, 1 are missing from the aggregate`,
      },
    ]);
    expect(collected.summaries).toEqual([undefined, undefined]);
  });

  it('names each runner that left no summary while the work folder is there', async () => {
    const workDir = mkdtempSync(path.join(os.tmpdir(), 'k6-distributed-'));
    try {
      const collected = await collectAll(await runnersWithoutSummaries(), workDir);
      expect(collected.failures.map((f) => f.message)).toEqual([
        'runner 0 left no summary; its results are missing from the aggregate',
        'runner 1 left no summary; its results are missing from the aggregate',
      ]);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  });
});
