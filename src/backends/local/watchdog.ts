import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

/**
 * The local runners' guard against an orchestrator that dies without cleaning up (SIGKILL, a
 * closed terminal's SIGHUP, an out-of-memory kill). Linux's `PR_SET_PDEATHSIG` is not reachable
 * from Node, so each run starts one tiny Node process, in its own session (a terminal's Ctrl-C or
 * hang-up does not reach it), whose stdin is a pipe from the orchestrator. The orchestrator writes
 * the process group of every runner it starts; the kernel closes the pipe when the orchestrator
 * ends, however it ends. On that end of file, unless the orchestrator said `done` first, the
 * watchdog SIGKILLs every runner's process group (k6 and anything a wrapper started) and removes
 * the run's work folder, then exits.
 *
 * Protocol, one line each: `dir <path>` (the folder to remove), `+<pgid>` (a runner's group),
 * `-<pgid>` (that runner exited), `done` (the orchestrator cleaned up itself).
 */
const WATCHDOG_SOURCE = `
const fs = require('node:fs');
const groups = new Set();
let dir;
let done = false;
let buffered = '';
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let i = buffered.indexOf('\\n'); i >= 0; i = buffered.indexOf('\\n')) {
    const line = buffered.slice(0, i);
    buffered = buffered.slice(i + 1);
    if (line === 'done') done = true;
    else if (line.startsWith('dir ')) dir = line.slice(4);
    else if (line.startsWith('+')) groups.add(Number(line.slice(1)));
    else if (line.startsWith('-')) groups.delete(Number(line.slice(1)));
  }
});
process.stdin.on('end', () => {
  if (!done) {
    for (const g of groups) { try { process.kill(-g, 'SIGKILL'); } catch {} }
    if (dir) { try { fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 }); } catch {} }
  }
  process.exit(0);
});
`;

/** One run's watchdog process (see the module comment). */
export class Watchdog {
  private readonly child: ChildProcess;
  private readonly input: Writable;
  private closed = false;

  /** @param workDir the run's private folder, removed by the watchdog if the orchestrator dies. */
  constructor(workDir: string) {
    this.child = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { PATH: process.env.PATH ?? '' },
    });
    this.child.on('error', () => {});
    this.input = this.child.stdin!;
    this.input.on('error', () => {});
    // Neither the process nor its pipe keeps the orchestrator's event loop alive.
    this.child.unref();
    (this.input as Writable & { unref?(): void }).unref?.();
    this.send(`dir ${workDir}`);
  }

  /** Guards a runner's process group (its leader's pid). */
  guard(pgid: number): void {
    this.send(`+${pgid}`);
  }

  /** Forgets a runner's process group once its leader exited (its pgid may be reused). */
  release(pgid: number): void {
    this.send(`-${pgid}`);
  }

  /** Tells the watchdog that the orchestrator cleaned up itself, and lets it exit. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.send('done');
    this.closed = true;
    this.input.end();
  }

  private send(line: string): void {
    if (!this.closed) this.input.write(`${line}\n`);
  }
}
