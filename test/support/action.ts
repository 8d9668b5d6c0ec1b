import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { collectOutput, ROOT, tempDir } from './cli.ts';

/** What one action step left, read the way GitHub reads it. */
export interface ActionStep {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Outputs written to GITHUB_OUTPUT. */
  outputs: Record<string, string>;
  /** State written to GITHUB_STATE (for the post step). */
  state: Record<string, string>;
  /** The job summary written to GITHUB_STEP_SUMMARY. */
  summary: string;
  /** `::error::` and `::warning::` commands the step printed. */
  annotations: string[];
}

/** Reads a GitHub file command file (`name=value` or `name<<DELIM` heredocs). */
export function readFileCommands(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) value.push(lines[i]!);
      out[heredoc[1]!] = value.join('\n');
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return out;
}

/**
 * Runs a bundled action entry (`dist/run.js`, `dist/run-post.js`, …) as the Actions runner does:
 * inputs as INPUT_<NAME> (upper case, spaces to _), GITHUB_OUTPUT, GITHUB_STATE, STATE_* from a
 * previous step, GITHUB_STEP_SUMMARY, in a workspace folder.
 */
export function startAction(
  entry: string,
  inputs: Record<string, string>,
  options: {
    workspace?: string;
    state?: Record<string, string>;
    env?: Record<string, string>;
    /** Its own process group, so that a test can signal the group as the runner's cancel does. */
    detached?: boolean;
  } = {},
): { child: ChildProcess; done: Promise<ActionStep>; workspace: string } {
  const workspace = options.workspace ?? tempDir('k6d-action-');
  const files = {
    output: path.join(workspace, '.github-output'),
    state: path.join(workspace, '.github-state'),
    summary: path.join(workspace, '.github-summary'),
  };
  for (const f of Object.values(files)) writeFileSync(f, '');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GITHUB_OUTPUT: files.output,
    GITHUB_STATE: files.state,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: tempDir('k6d-runner-temp-'),
    // The step's own temp folders (the run's archive) stay inside one the test removes, even when
    // a test kills the step with SIGKILL, as the Actions runner does past the cancellation grace.
    TMPDIR: tempDir('k6d-step-tmp-'),
    ...options.env,
  };
  for (const [name, value] of Object.entries(inputs))
    env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
  for (const [name, value] of Object.entries(options.state ?? {})) env[`STATE_${name}`] = value;
  const child = spawn(process.execPath, [path.join(ROOT, entry)], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const done = collectOutput(child).then(
    ({ code, stdout, stderr }): ActionStep => ({
      code,
      stdout,
      stderr,
      outputs: readFileCommands(files.output),
      state: readFileCommands(files.state),
      summary: readFileSync(files.summary, 'utf8'),
      annotations: stdout.split('\n').filter((l) => /^::(error|warning)/.test(l)),
    }),
  );
  return { child, done, workspace };
}

/** Runs an action entry to the end. */
export function runAction(
  entry: string,
  inputs: Record<string, string>,
  options: Parameters<typeof startAction>[2] = {},
): Promise<ActionStep> {
  return startAction(entry, inputs, options).done;
}
