import { existsSync } from 'node:fs';
import type { Runner } from '../backends/backend.ts';
import type { Failure } from '../errors.ts';
import { errorMessage } from '../errors.ts';
import { describeExit } from '../k6/exit-codes.ts';
import { k6ErrorLine } from '../k6/log.ts';
import { parseRunnerSummary, type RunnerSummary } from '../k6/summary.ts';
import type { RunnerExit } from '../plan.ts';

/** How many runners' leftovers are read at once (on Kubernetes: Pod log reads in flight). */
const COLLECT_CONCURRENCY = 32;

/**
 * What one runner left but its summary (parsed into {@link Collected.summaries}, its text not
 * kept): its log tail, its node, why it was unreadable.
 */
export type RunnerLeftovers = Omit<Awaited<ReturnType<Runner['collect']>>, 'summary'>;

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
  // Each summary is parsed as soon as it is read, 32 runners at a time, and its text dropped:
  // 1,000 runners' summaries (227 MB) are never all held at once. Reading all first, then parsing,
  // took ~330 ms at 1,000 runners against ~270 ms this way (more GC, fresh pages; bench/scale.ts).
  const leftovers: RunnerLeftovers[] = new Array(runners.length);
  const parsed: Array<{ summary: RunnerSummary } | { error: unknown } | undefined> = new Array(
    runners.length,
  );
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runners.length) {
      const i = next++;
      const left = await runners[i]!.collect();
      if (left.summary !== undefined) {
        try {
          parsed[i] = { summary: parseRunnerSummary(left.summary) };
        } catch (error) {
          parsed[i] = { error };
        }
      }
      const { summary: _parsed, ...rest } = left;
      leftovers[i] = rest;
    }
  };
  await Promise.all(Array.from({ length: Math.min(COLLECT_CONCURRENCY, runners.length) }, worker));
  const missing = leftovers.flatMap((_, i) => (parsed[i] === undefined ? [i] : []));
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
    const read = parsed[i];
    if (read === undefined) {
      if (folderGone) return undefined;
      failures.push({
        kind: 'incomplete',
        runner: i,
        message: `runner ${i} left no summary${left.unreadable ? ` (${left.unreadable})` : ''}; its results are missing from the aggregate`,
      });
      return undefined;
    }
    if ('summary' in read) return read.summary;
    failures.push({
      kind: 'incomplete',
      runner: i,
      message: `runner ${i}'s summary could not be read: ${errorMessage(read.error)}`,
    });
    return undefined;
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
