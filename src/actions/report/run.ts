import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DefaultArtifactClient } from '@actions/artifact';
import * as core from '@actions/core';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import { createGitHub } from '../../github/client.ts';
import { actionContext } from './context.ts';
import { readReportInputs } from './inputs.ts';
import { type ReportOutcome, report } from './report.ts';

/**
 * The runner of the `report` action: inputs -> logic -> outputs. The one place that talks to
 * @actions/core and the one try/catch: a ConfigurationError fails the step with its own one-line
 * message; anything else fails it with `report failed: …` and its stack in the debug log.
 */
export async function run(): Promise<void> {
  try {
    const inputs = readReportInputs((name) => core.getInput(name));
    core.setSecret(inputs.token);
    const ctx = actionContext();
    const outcome = await report(inputs, {
      gh: createGitHub(inputs.token, { baseUrl: ctx.apiUrl }),
      transfer: new DefaultArtifactClient(),
      token: inputs.token,
      ctx,
      log: (line) => core.info(line),
      writeSummary: writeSummary,
      tempDir: (prefix) => mkdtemp(path.join(process.env.RUNNER_TEMP || os.tmpdir(), prefix)),
    });
    apply(outcome);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      core.setFailed(error.message);
    } else {
      core.debug(error instanceof Error && error.stack ? error.stack : String(error));
      core.setFailed(`report failed: ${errorMessage(error)}`);
    }
  }
}

async function writeSummary(markdown: string): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) {
    core.info('no GITHUB_STEP_SUMMARY: the job summary is not written');
    return;
  }
  await core.summary.addRaw(markdown).write();
}

/** Outputs, warnings, annotations, and the step's failure. */
function apply(outcome: ReportOutcome): void {
  for (const [name, value] of Object.entries(outcome.outputs)) core.setOutput(name, value);
  for (const warning of outcome.warnings) core.warning(warning);
  for (const a of outcome.annotations) {
    if (a.level === 'error') core.error(a.message, { title: a.title });
    else core.warning(a.message, { title: a.title });
  }
  if (outcome.failure) core.setFailed(outcome.failure);
}
