import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunResult } from '../../src/result/schema.ts';
import { tempDir } from './temp.ts';
import { waitFor } from './wait.ts';

export { tempDir };

/** The repository root. */
export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Output of one CLI run. */
export interface CliRun {
  code: number | null;
  /** The signal that ended the CLI, when one did. */
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The private TMPDIR the CLI ran with: nothing may be left in it. */
  tmp: string;
  /** The parsed result JSON, when the CLI wrote one. */
  result?: RunResult;
}

/**
 * Starts the CLI from source on this Node (24), with its own TMPDIR so a test can check that it
 * left nothing behind. Returns the child and a promise of its outcome.
 */
export function startCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; detached?: boolean } = {},
): { child: ChildProcess; done: Promise<CliRun>; tmp: string } {
  const tmp = tempDir('k6d-cli-tmp-');
  const cwd = options.cwd ?? tempDir('k6d-cli-cwd-');
  // detached: the CLI leads its own process group, as in a terminal, where Ctrl-C signals the group.
  const child = spawn(process.execPath, [path.join(ROOT, 'src/cli/bin.ts'), ...args], {
    cwd,
    env: { ...process.env, ...options.env, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const done = collectOutput(child).then(({ code, signal, stdout, stderr }) => {
    const out: CliRun = { code, signal, stdout, stderr, tmp };
    const ours = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
    const resultArg = Math.max(ours.indexOf('--out'), ours.indexOf('-o'));
    const resultPath = path.resolve(
      cwd,
      resultArg >= 0 ? args[resultArg + 1]! : 'k6-distributed-result.json',
    );
    try {
      out.result = JSON.parse(readFileSync(resultPath, 'utf8')) as RunResult;
    } catch {
      // no result written
    }
    return out;
  });
  return { child, done, tmp };
}

/** Gathers a child's stdout and stderr; resolves when it has exited and its streams closed. */
export function collectOutput(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

/** Runs the CLI to the end. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliRun> {
  return startCli(args, options).done;
}

/** k6 processes whose command line mentions `marker` (e.g. a test's TMPDIR). */
export function k6ProcessesUnder(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', marker], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(' run ') && !l.includes('pgrep'));
  } catch {
    return [];
  }
}

/** Files left in a folder. */
export function leftovers(dir: string): string[] {
  return readdirSync(dir);
}

/** Writes a k6 script into a fresh folder and returns its path. */
export function writeScript(source: string, name = 'script.js'): string {
  const dir = tempDir('k6d-script-');
  const file = path.join(dir, name);
  writeFileSync(file, source);
  return file;
}

/**
 * Starts the CLI in its own process group (as a shell starts a foreground job) and waits until its
 * stderr says `until` (or it exited), for a test to act at that moment.
 */
export async function startCliUntil(args: string[], until: string, env?: Record<string, string>) {
  const cli = startCli(args, { detached: true, ...(env ? { env } : {}) });
  let stderr = '';
  cli.child.stderr!.on('data', (d) => {
    stderr += d;
  });
  await waitFor(() => stderr.includes(until) || cli.child.exitCode !== null, `"${until}"`, {
    timeoutMs: 60_000,
    intervalMs: 20,
  });
  return cli;
}
