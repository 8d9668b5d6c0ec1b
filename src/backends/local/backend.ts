import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import getPort from 'get-port';
import { httpRequest, runnerApi } from '../../k6/rest.ts';
import { type RunPlan, runnerArgs } from '../../run/plan.ts';
import type { Backend, Runner, RunnerExit } from '../backend.ts';

/** How long a runner may take to exit after SIGTERM before it is killed, in ms. */
const TERM_GRACE_MS = 5_000;

/** Every k6 process any LocalBackend started that has not exited yet. */
const liveChildren = new Set<ChildProcess>();

/** SIGKILLs every live local runner at once: the last resort of a second Ctrl-C. */
export function killAllLocalRunners(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
}

/** Options of {@link LocalBackend}. */
export interface LocalBackendOptions {
  /**
   * Called with each line a runner's script wrote with `console.*` (k6 logs them with
   * `source=console`), as k6 printed it, so the CLI can show it with the runner's index in front.
   */
  onConsole?(runner: number, line: string): void;
}

/**
 * The local backend: every runner is a k6 child process on this machine, with its REST API on a
 * free loopback port, its log in `workDir/runner-<i>.log` and its summary in
 * `workDir/runner-<i>-summary.json`. Each process gets `K6D_RUNNER_INDEX` (0-based) and
 * `K6D_RUNNERS` in its environment (visible to the script as `__ENV`).
 */
export class LocalBackend implements Backend {
  readonly name = 'local' as const;
  private readonly children: Array<{ child: ChildProcess; exited: Promise<RunnerExit>; done: boolean }> = [];

  /**
   * @param k6Binary path of the k6 binary every runner executes.
   * @param workDir an existing folder for logs and summaries.
   */
  constructor(k6Binary: string, workDir: string, options: LocalBackendOptions = {}) {
    this.k6Binary = k6Binary;
    this.workDir = workDir;
    this.options = options;
  }

  private readonly k6Binary: string;
  private readonly workDir: string;
  private readonly options: LocalBackendOptions;

  async launch(plan: RunPlan, archivePath: string): Promise<Runner[]> {
    const runners: Runner[] = [];
    for (const runnerPlan of plan.runners) {
      const port = await getPort({ host: '127.0.0.1' });
      const logPath = path.join(this.workDir, `runner-${runnerPlan.index}.log`);
      const summaryPath = path.join(this.workDir, `runner-${runnerPlan.index}-summary.json`);
      const args = runnerArgs(plan, runnerPlan, {
        archive: archivePath,
        summary: summaryPath,
        address: `127.0.0.1:${port}`,
      });
      const child = spawn(this.k6Binary, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          K6_NO_USAGE_REPORT: 'true',
          K6D_RUNNER_INDEX: String(runnerPlan.index),
          K6D_RUNNERS: String(plan.runners.length),
        },
      });
      const logDone = this.captureLog(child, runnerPlan.index, logPath);
      const entry = {
        child,
        done: false,
        exited: new Promise<RunnerExit>((resolve) => {
          child.once('error', (error) =>
            resolve({ code: null, reason: `could not start k6: ${error.message}` }),
          );
          child.once('exit', (code, signal) => {
            // The log is complete before anyone reads it (collect() follows the exit).
            void logDone.then(() => resolve({ code, signal }));
          });
        }),
      };
      liveChildren.add(child);
      void entry.exited.then(() => {
        entry.done = true;
        liveChildren.delete(child);
      });
      this.children.push(entry);
      runners.push({
        index: runnerPlan.index,
        api: runnerApi(httpRequest(`http://127.0.0.1:${port}`)),
        exited: entry.exited,
        kill: async () => {
          if (!entry.done) child.kill('SIGKILL');
          await entry.exited;
        },
        collect: async () => {
          const summary = await readFile(summaryPath, 'utf8').catch(() => undefined);
          const logText = await readFile(logPath, 'utf8').catch(() => '');
          const logTail = logText.trimEnd().split('\n').slice(-15).join('\n');
          return summary === undefined ? { logTail } : { summary, logTail };
        },
      });
    }
    return runners;
  }

  /**
   * Writes a runner's stdout and stderr to its log file, and hands each console line to
   * `onConsole`. Resolves once both streams ended and the file is flushed.
   */
  private captureLog(child: ChildProcess, index: number, logPath: string): Promise<void> {
    const file = createWriteStream(logPath);
    const streams = [child.stdout!, child.stderr!];
    const ended = streams.map(
      (stream) =>
        new Promise<void>((resolve) => {
          const lines = createInterface({ input: stream, crlfDelay: Infinity });
          lines.on('line', (line) => {
            file.write(`${line}\n`);
            if (this.options.onConsole && line.includes('source=console'))
              this.options.onConsole(index, line);
          });
          lines.on('close', resolve);
        }),
    );
    return Promise.all(ended).then(() => new Promise<void>((resolve) => file.end(() => resolve())));
  }

  async cleanup(): Promise<void> {
    const live = this.children.filter((c) => !c.done);
    for (const c of live) c.child.kill('SIGTERM');
    const timeout = new Promise<'timeout'>((resolve) =>
      setTimeout(resolve, TERM_GRACE_MS, 'timeout').unref(),
    );
    await Promise.race([Promise.all(live.map((c) => c.exited)), timeout]);
    for (const c of live) if (!c.done) c.child.kill('SIGKILL');
    await Promise.all(live.map((c) => c.exited));
  }
}
