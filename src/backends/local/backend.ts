import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, createWriteStream, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import getPort from 'get-port';
import { SUMMARY_OUT_ENV } from '../../k6/entry.ts';
import { countInsufficientVUs } from '../../k6/log.ts';
import { httpRequest, runnerApi } from '../../k6/rest.ts';
import type { RunnerExit } from '../../plan.ts';
import { intervalMetricsEnv, type RunPlan, runnerArgs, runnerEnv } from '../../plan.ts';
import type { Backend, Runner } from '../backend.ts';
import { Watchdog } from './watchdog.ts';

/** How long a runner may take to exit after SIGTERM before it is killed, in ms. */
const TERM_GRACE_MS = 5_000;

/** Every k6 process any LocalBackend started that has not exited yet. */
const liveChildren = new Set<ChildProcess>();

/**
 * Sends `signal` to a runner's whole process group (it leads its own, see {@link LocalBackend}), so
 * that a k6 started through a wrapper script gets it too; falls back to the process alone.
 */
function signalRunner(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

/** SIGKILLs every live local runner at once: the last resort of a second Ctrl-C. */
export function killAllLocalRunners(): void {
  for (const child of liveChildren) signalRunner(child, 'SIGKILL');
}

/** Options of {@link LocalBackend}. */
export interface LocalBackendOptions {
  /**
   * Called with each line a runner's script wrote with `console.*` (k6 logs them with
   * `source=console`), as k6 printed it, so the CLI can show it with the runner's index in front.
   */
  onConsole?(runner: number, line: string): void;
  /**
   * Extra environment variables of every runner: the run action's `env` and `secret-env` inputs
   * and the `-e` values (which stay off the command line, where `ps` would show them).
   */
  env?: Record<string, string>;
}

/** Clock ticks per second of `/proc/<pid>/stat`'s times (Linux's USER_HZ, 100 on every architecture Node runs on). */
const CLOCK_TICKS_PER_S = 100;

/**
 * The CPU time a process has used so far, in s: `utime + stime` (fields 14 and 15) of
 * `/proc/<pid>/stat`, every thread included; undefined off Linux or once the process is gone.
 */
export async function processCpuSeconds(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields?.[11]) + Number(fields?.[12]);
  return Number.isFinite(ticks) ? ticks / CLOCK_TICKS_PER_S : undefined;
}

/** How many of a runner's last log lines its collect() returns. */
const LOG_TAIL_LINES = 15;
/** How much of a log's end is read at first to find its tail, in bytes. */
const LOG_TAIL_CHUNK = 64 * 1024;

/**
 * A local runner's summary, as bytes: its compact summary, else k6's export; undefined when
 * neither can be read. Bytes, not text: the compact summary is nearly all base64 lines, which
 * the parser decodes from the bytes (decoding 227 KiB of UTF-8 per runner cost ~85 ms of CPU at
 * 1,000 runners). Read synchronously, on purpose: every runner has ended and nothing else waits,
 * and 1,000 summaries of 227 KiB read in about 0.26 s this way against 0.5–0.9 s with
 * `fs/promises` `readFile` (1,000 concurrent reads queued on libuv's 4 threads; bench/scale.ts).
 */
export function readRunnerSummary(compactPath: string, exportPath: string): Buffer | undefined {
  for (const file of [compactPath, exportPath]) {
    try {
      return readFileSync(file);
    } catch {
      // next
    }
  }
  return undefined;
}

/**
 * The last `lines` lines of a log file, read from its end (a chatty script's log can be
 * gigabytes); '' when the file is missing. Reads at most 1 MiB.
 */
export async function readLogTail(file: string, lines: number): Promise<string> {
  // Synchronous reads, as readRunnerSummary's: after the run, 1,000 logs' tails in a few ms of
  // system calls instead of 4 round trips each through libuv's thread pool.
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const { size } = fstatSync(fd);
    let length = Math.min(size, LOG_TAIL_CHUNK);
    for (;;) {
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      const text = buffer.toString('utf8').trimEnd();
      const all = text.split('\n');
      const whole = length === size;
      if (all.length > lines || whole || length >= 16 * LOG_TAIL_CHUNK) {
        // The first line of a partial read may be cut: drop it unless it is all there is.
        const usable = whole || all.length <= lines ? all : all.slice(1);
        return usable.slice(-lines).join('\n');
      }
      length = Math.min(size, length * 4);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The local backend: every runner is a k6 child process on this machine, with its REST API on a
 * free loopback port, its log in `workDir/runner-<i>.log`, its compact summary in
 * `workDir/runner-<i>-summary.k6d.json` (written by the entry module's handleSummary, named by
 * `K6D_SUMMARY_OUT`) and k6's export in `workDir/runner-<i>-summary.json` (the fallback). Each
 * process gets `K6D_RUNNER_INDEX` (0-based) and
 * `K6D_RUNNERS` in its environment (visible to the script as `__ENV`).
 *
 * Each runner leads its own process group (`detached`): a terminal's Ctrl-C reaches only the
 * orchestrator, which stops the runners through their REST API and keeps their summaries (k6 would
 * otherwise close its API at once on the group's SIGINT). Signals go to the whole group. A
 * {@link Watchdog} kills the groups and removes `workDir` if the orchestrator dies without
 * cleaning up (SIGKILL, SIGHUP).
 */
export class LocalBackend implements Backend {
  readonly name = 'local' as const;
  private readonly children: Array<{ child: ChildProcess; exited: Promise<RunnerExit>; done: boolean }> = [];
  private watchdog: Watchdog | undefined;
  /** Extra environment of every runner (the `env`/`secret-env` inputs, the `-e` values). */
  private readonly env: Record<string, string>;

  /**
   * @param k6Binary path of the k6 binary every runner executes.
   * @param workDir an existing folder for logs and summaries.
   */
  constructor(k6Binary: string, workDir: string, options: LocalBackendOptions = {}) {
    this.k6Binary = k6Binary;
    this.workDir = workDir;
    this.options = options;
    this.env = options.env ?? {};
  }

  private readonly k6Binary: string;
  private readonly workDir: string;
  private readonly options: LocalBackendOptions;

  async launch(plan: RunPlan, archivePath: string): Promise<Runner[]> {
    const runners: Runner[] = [];
    this.watchdog ??= new Watchdog(this.workDir);
    for (const runnerPlan of plan.runners) {
      const port = await getPort({ host: '127.0.0.1' });
      const logPath = path.join(this.workDir, `runner-${runnerPlan.index}.log`);
      const summaryPath = path.join(this.workDir, `runner-${runnerPlan.index}-summary.json`);
      const compactPath = path.join(this.workDir, `runner-${runnerPlan.index}-summary.k6d.json`);
      const args = runnerArgs(plan, runnerPlan, {
        archive: archivePath,
        summary: summaryPath,
        address: `127.0.0.1:${port}`,
      });
      const child = spawn(this.k6Binary, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group: the terminal's Ctrl-C is the orchestrator's to handle.
        detached: true,
        env: {
          ...process.env,
          ...this.env,
          // `-e` wins over the environment, as in k6.
          ...plan.env,
          K6_NO_USAGE_REPORT: 'true',
          K6D_RUNNER_INDEX: String(runnerPlan.index),
          [SUMMARY_OUT_ENV]: compactPath,
          K6D_RUNNERS: String(plan.runners.length),
          ...runnerEnv(plan),
          ...intervalMetricsEnv(
            plan,
            runnerPlan.index,
            plan.env.K6_FEATURES ?? this.env.K6_FEATURES ?? process.env.K6_FEATURES,
          ),
        },
      });
      const warnings = { insufficientVUs: 0 };
      const logDone = this.captureLog(child, runnerPlan.index, logPath, warnings);
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
      if (child.pid !== undefined) this.watchdog.guard(child.pid);
      void entry.exited.then(() => {
        entry.done = true;
        liveChildren.delete(child);
        if (child.pid !== undefined) {
          // Whatever a wrapper left in the runner's group goes with it.
          signalRunner(child, 'SIGKILL');
          this.watchdog?.release(child.pid);
        }
      });
      this.children.push(entry);
      runners.push({
        index: runnerPlan.index,
        api: runnerApi(httpRequest(`http://127.0.0.1:${port}`)),
        exited: entry.exited,
        kill: async () => {
          if (!entry.done) signalRunner(child, 'SIGKILL');
          await entry.exited;
        },
        // SIGTERM ends k6's --linger (or its test, when the REST stop was not taken): k6 writes its
        // summary and exits. Sent to the runner's process group, as every signal of ours.
        terminate: async () => {
          if (!entry.done) signalRunner(child, 'SIGTERM');
        },
        collect: async () => {
          // The compact summary the entry module's handleSummary wrote; k6's export when it did not.
          const summary = readRunnerSummary(compactPath, summaryPath);
          const logTail = await readLogTail(logPath, LOG_TAIL_LINES);
          const read = { logTail, insufficientVUs: warnings.insufficientVUs };
          return summary === undefined ? read : { summary, ...read };
        },
        cpuSeconds: async () => (entry.done ? undefined : processCpuSeconds(child.pid)),
      });
    }
    return runners;
  }

  /**
   * Writes a runner's stdout and stderr to its log file, and hands each console line to
   * `onConsole`, counting k6's "Insufficient VUs" warnings in `warnings`. Resolves once both
   * streams ended and the file is flushed.
   */
  private captureLog(
    child: ChildProcess,
    index: number,
    logPath: string,
    warnings: { insufficientVUs: number },
  ): Promise<void> {
    const file = createWriteStream(logPath);
    const streams = [child.stdout!, child.stderr!];
    const ended = streams.map(
      (stream) =>
        new Promise<void>((resolve) => {
          const lines = createInterface({ input: stream, crlfDelay: Infinity });
          lines.on('line', (line) => {
            file.write(`${line}\n`);
            warnings.insufficientVUs += countInsufficientVUs(line);
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
    for (const c of live) signalRunner(c.child, 'SIGTERM');
    const timeout = new Promise<'timeout'>((resolve) =>
      setTimeout(resolve, TERM_GRACE_MS, 'timeout').unref(),
    );
    await Promise.race([Promise.all(live.map((c) => c.exited)), timeout]);
    for (const c of live) if (!c.done) signalRunner(c.child, 'SIGKILL');
    await Promise.all(live.map((c) => c.exited));
    this.watchdog?.close();
  }
}
