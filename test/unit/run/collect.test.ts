import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Runner } from '../../../src/backends/backend.ts';
import { collectAll } from '../../../src/run/collect.ts';
import { FakeBackend, FakeClock, summaryJson } from './support/fakes.ts';

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

  it('reads more runners than it reads at once, each failure in runner order, no summary text kept', async () => {
    // 70 runners (more than the 32 read at once): every 10th left none, every 7th a broken one.
    const scripts = Array.from({ length: 70 }, (_, i) => ({
      summary: i % 10 === 3 ? null : i % 7 === 5 ? '{"metrics": ' : summaryJson(100 + i),
    }));
    // collectAll calls nothing but collect(): runners that only answer it, as a backend's do after the run.
    const runners = scripts.map(
      ({ summary }, index) =>
        ({
          index,
          collect: async () =>
            summary === null ? { logTail: '' } : { summary: Buffer.from(summary), logTail: '' },
        }) as unknown as Runner,
    );
    const collected = await collectAll(runners);
    const expected = scripts.flatMap((s, i) =>
      s.summary === null
        ? [`runner ${i} left no summary; its results are missing from the aggregate`]
        : s.summary.startsWith('{"metrics": ')
          ? [expect.stringMatching(new RegExp(`^runner ${i}'s summary could not be read: `))]
          : [],
    );
    expect(collected.failures.map((f) => f.message)).toEqual(expected);
    collected.summaries.forEach((s, i) => {
      const broken = scripts[i]!.summary === null || scripts[i]!.summary!.startsWith('{"metrics": ');
      expect(s === undefined, `runner ${i}`).toBe(broken);
      if (s) expect(s.metrics.http_reqs).toMatchObject({ count: 100 + i });
    });
    expect(collected.leftovers.every((left) => !('summary' in left))).toBe(true);
  });
});
