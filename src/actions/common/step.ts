import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DefaultArtifactClient } from '@actions/artifact';
import * as core from '@actions/core';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import { createGitHub } from '../../github/client.ts';
import type { ActionContext } from '../report/context.ts';
import type { ReportDeps, ReportOutcome } from '../report/outcome.ts';

/**
 * The I/O every action step shares with @actions/core: the job summary, failing the step, the
 * report's clients and how a report outcome reaches the step (warnings, annotations, failure).
 */

/** Writes markdown to the job summary; logs instead when the runner gives no GITHUB_STEP_SUMMARY. */
export async function writeSummary(markdown: string): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) {
    core.info('no GITHUB_STEP_SUMMARY: the job summary is not written');
    return;
  }
  await core.summary.addRaw(markdown).write();
}

/**
 * Fails the step with one line: a ConfigurationError with its own message (it names the input);
 * anything else as `prefix: message`, with its stack in the debug log.
 */
export function failStep(error: unknown, prefix: string): void {
  if (error instanceof ConfigurationError) core.setFailed(error.message);
  else {
    core.debug(error instanceof Error && error.stack ? error.stack : String(error));
    core.setFailed(`${prefix}: ${errorMessage(error)}`);
  }
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
