import { existsSync } from 'node:fs';
import type { Runner } from '../backends/backend.ts';
import type { Failure } from '../errors.ts';
import { errorMessage } from '../errors.ts';
import { describeExit } from '../k6/exit-codes.ts';
import { k6ErrorLine } from '../k6/log.ts';
import { parseRunnerSummary, type RunnerSummary } from '../k6/summary.ts';
import type { RunnerExit } from '../plan.ts';

/** What one runner left: its summary export text (when it wrote one), its log tail, its node. */
export type RunnerLeftovers = Awaited<ReturnType<Runner['collect']>>;

/** What the collect stage read from every runner, by runner index. */
export interface Collected {
  leftovers: RunnerLeftovers[];
  /** The parsed summary of each runner; `undefined` for a runner whose summary is missing or unreadable. */
  summaries: Array<RunnerSummary | undefined>;
  /** One `incomplete` failure per runner whose share is missing from the aggregate. */
  failures: Failure[];
  /** Runners read from k6's `--summary-export` because they wrote no compact summary (slower to parse). */
  fromExport: number[];
}

/**
 * Collect stage: reads and parses every runner's summary and log tail. Runs after every runner
 * ended and before the backend is cleaned up (the files and Pod logs go with the cleanup).
 * @param workDir the folder the runners wrote their summaries in (the local backend), if any: when
 *   summaries are missing and it is gone (a tmp cleaner removed it during the run), one failure
 *   says so in place of a "left no summary" line per runner.
 */
export async function collectAll(runners: readonly Runner[], workDir?: string): Promise<Collected> {
  const leftovers = await Promise.all(runners.map((r) => r.collect()));
  const missing = leftovers.flatMap((left, i) => (left.summary === undefined ? [i] : []));
  const failures: Failure[] =
    workDir !== undefined && missing.length > 0 && !existsSync(workDir)
      ? [
          {
            kind: 'incomplete',
            message: `the work folder ${workDir} was removed during the run (a tmp cleaner?): the runners' summaries were in it; runner ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing from the aggregate`,
          },
        ]
      : [];
  const folderGone = failures.length > 0;
  const summaries = leftovers.map((left, i) => {
    if (left.summary === undefined) {
      if (folderGone) return undefined;
      failures.push({
        kind: 'incomplete',
        runner: i,
        message: `runner ${i} left no summary${left.unreadable ? ` (${left.unreadable})` : ''}; its results are missing from the aggregate`,
      });
      return undefined;
    }
    try {
      return parseRunnerSummary(left.summary);
    } catch (error) {
      failures.push({
        kind: 'incomplete',
        runner: i,
        message: `runner ${i}'s summary could not be read: ${errorMessage(error)}`,
      });
      return undefined;
    }
  });
  const fromExport = summaries.flatMap((s, i) => (s?.fromExport ? [i] : []));
  return { leftovers, summaries, failures, fromExport };
}

/**
 * The CPU time each runner has used so far, in s (`Runner.cpuSeconds`); undefined where the
 * backend cannot read it. Read at the start and at the end of the test: the difference is its
 * test's CPU time (a paused or lingering k6 is idle).
 */
export function cpuSecondsOf(runners: readonly Runner[]): Promise<Array<number | undefined>> {
  return Promise.all(runners.map((r) => r.cpuSeconds?.().catch(() => undefined)));
}

/**
 * The one line that says why a runner failed: `runner 2 failed[ before the start] (exit 107:
 * script exception): <k6's error line, at most 300 characters>`, read from the runner's log tail.
 */
export async function runnerFailureLine(
  runner: Runner,
  exit: RunnerExit,
  when?: 'before the start',
): Promise<string> {
  const { logTail } = await runner.collect();
  const reason = exit.reason ?? describeExit(exit.code, exit.signal);
  const detail = logTail ? `: ${k6ErrorLine(logTail).slice(0, 300)}` : '';
  return `runner ${runner.index} failed${when ? ` ${when}` : ''} (${reason})${detail}`;
}
