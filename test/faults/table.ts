import { afterAll, describe, expect, it } from 'vitest';

/*
 * The fault table: every fault and hostile input is one case, run for real, and judged by the same
 * four rules (issue "Nothing lost, nothing left running, nothing leaked"):
 *   1. the exit code is the documented one (README "Exit codes", docs/troubleshooting.md);
 *   2. the message is one line: at most one `error:` line, and no stack trace;
 *   3. nothing is left: no process, no temp file (and, for the Kubernetes rows, no ConfigMap,
 *      Job or Pod);
 *   4. no data that was collected is lost.
 * Each backend has its own file (local.test.ts, report.test.ts; Kubernetes rows go in their own
 * file under the cluster project) and calls {@link faultTable}, which prints `N cases, N ok`.
 */

/** What one fault case observed. */
export interface FaultOutcome {
  /** The exit code; a process ended by a signal counts as 128 + the signal's number (SIGKILL 137). */
  code: number | null;
  /** What the user saw on stderr (or the one-line error of an action or function). */
  stderr: string;
  /** What is left after the case: processes, temp files, ConfigMaps, Jobs, Pods (one line each). */
  leftovers: string[];
  /** Why collected data was lost; undefined when nothing was (or nothing was collected). */
  dataLost?: string;
}

/** One row of the table. */
export interface FaultCase {
  name: string;
  /** The documented exit code. */
  code: number;
  /** What the one error line must say, when there is one. */
  message?: RegExp;
  run(): Promise<FaultOutcome>;
  /** Per-case timeout in ms (default 120 s). */
  timeoutMs?: number;
}

/** What is wrong with an outcome by the table's four rules ([] when the case is ok). */
export function judgeOutcome(c: FaultCase, o: FaultOutcome): string[] {
  const problems: string[] = [];
  if (o.code !== c.code) problems.push(`exit code ${o.code}, documented ${c.code}`);
  const errorLines = o.stderr.split('\n').filter((l) => /\berror\b:/i.test(l));
  if (errorLines.length > 1) problems.push(`${errorLines.length} error lines: ${errorLines.join(' | ')}`);
  if (/^\s+at .+:\d+:\d+\)?$/m.test(o.stderr)) problems.push('a stack trace on stderr');
  if (c.message && !c.message.test(o.stderr))
    problems.push(`no line matching ${c.message}: ${o.stderr.trim()}`);
  for (const left of o.leftovers) problems.push(`left behind: ${left}`);
  if (o.dataLost) problems.push(`data lost: ${o.dataLost}`);
  return problems;
}

/**
 * Runs the cases as one `describe`, one test each, and prints `<title>: N cases, N ok` at the end.
 */
export function faultTable(title: string, cases: readonly FaultCase[]): void {
  describe(title, () => {
    let ok = 0;
    afterAll(() => {
      process.stdout.write(`${title}: ${cases.length} cases, ${ok} ok\n`);
    });
    for (const c of cases) {
      it(
        c.name,
        async () => {
          const outcome = await c.run();
          const problems = judgeOutcome(c, outcome);
          if (problems.length === 0) ok++;
          expect(problems, `${c.name}\n--- stderr ---\n${outcome.stderr}`).toEqual([]);
        },
        c.timeoutMs ?? 120_000,
      );
    }
  });
}

/** The exit code of a process from `close`'s code and signal, as a shell reports it. */
export function shellExitCode(code: number | null, signal: NodeJS.Signals | null): number | null {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  if (code !== null) return code;
  return signal && numbers[signal] !== undefined ? 128 + numbers[signal]! : null;
}
