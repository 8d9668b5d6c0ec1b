import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DefaultArtifactClient } from '@actions/artifact';
import * as core from '@actions/core';
import { createGitHub } from '../../github/client.ts';
import type { Logger } from '../../log.ts';
import type { ActionContext } from '../report/context.ts';
import type { ReportDeps, ReportOutcome } from '../report/outcome.ts';
import { type StepFailure, stepFailure } from './failure.ts';

/**
 * The one file of the actions that talks to @actions/core: inputs, outputs, state for the post
 * step, secrets, the job summary, failing the step, the report's clients and how a report outcome
 * reaches the step (warnings, annotations, failure). The actions' runners go through it; their
 * logic gets what it needs as arguments and returns values.
 */

/** The step log: @actions/core is a {@link Logger} as it is. */
export const stepLog: Logger = core;

/** Reads an input as the runner gives it (INPUT_<NAME>); '' when unset. */
export function getInput(name: string): string {
  return core.getInput(name);
}

/** Sets the step's outputs, in the order given (GITHUB_OUTPUT). */
export function setOutputs(outputs: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(outputs)) core.setOutput(name, value);
}

/** Saves a value for the post step (GITHUB_STATE). */
export function saveState(name: string, value: string): void {
  core.saveState(name, value);
}

/** Reads a value the main step saved (STATE_<name>); '' when it saved none. */
export function getState(name: string): string {
  return core.getState(name);
}

/** Masks each value in the step log from now on. */
export function maskSecrets(secrets: Iterable<string>): void {
  for (const secret of secrets) core.setSecret(secret);
}

/**
 * Writes markdown to the job summary; logs instead when the runner gives no GITHUB_STEP_SUMMARY.
 * @param required throw instead when there is no GITHUB_STEP_SUMMARY (@actions/core's error).
 */
export async function writeSummary(markdown: string, required = false): Promise<void> {
  if (!required && !process.env.GITHUB_STEP_SUMMARY) {
    core.info('no GITHUB_STEP_SUMMARY: the job summary is not written');
    return;
  }
  await core.summary.addRaw(markdown).write();
}

/** Fails the step with the failure's one line; its stack, if any, goes to the debug log first. */
export function applyFailure(failure: StepFailure): void {
  if (failure.stack) core.debug(failure.stack);
  core.setFailed(failure.message);
}

/**
 * Fails the step with one line: a ConfigurationError with its own message (it names the input);
 * anything else as `prefix: message`, with its stack in the debug log.
 */
export function failStep(error: unknown, prefix: string): void {
  applyFailure(stepFailure(error, prefix));
}

/**
 * The report's clients for a step: REST through `token` (masked here), artifacts, the step log,
 * and temp folders under RUNNER_TEMP.
 */
export function reportDeps(
  token: string,
  ctx: ActionContext,
  summary: (markdown: string) => Promise<void> = writeSummary,
): ReportDeps {
  core.setSecret(token);
  return {
    gh: createGitHub(token, { baseUrl: ctx.apiUrl }),
    transfer: new DefaultArtifactClient(),
    token,
    ctx,
    log: (line) => core.info(line),
    writeSummary: summary,
    tempDir: (prefix) => mkdtemp(path.join(process.env.RUNNER_TEMP || os.tmpdir(), prefix)),
  };
}

/** Reports an outcome's warnings and annotations, and fails the step when it says so. */
export function applyOutcome(outcome: Omit<ReportOutcome, 'outputs'>): void {
  for (const warning of outcome.warnings) core.warning(warning);
  for (const a of outcome.annotations) {
    if (a.level === 'error') core.error(a.message, { title: a.title });
    else core.warning(a.message, { title: a.title });
  }
  if (outcome.failure) core.setFailed(outcome.failure);
}
