import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Backend } from './backends/backend.ts';
import type { RunConfig } from './config.ts';
import { resolveK6Binary } from './k6/binary.ts';
import { preflight, splittingWarnings } from './k6/preflight.ts';
import { applyDeclaredContains } from './k6/summary.ts';
import { thresholdPercentiles } from './k6/thresholds.ts';
import { type Logger, runDistributed } from './orchestrator.ts';
import { planRun } from './plan.ts';
import type { RunEnvironment, RunResult } from './result.ts';
import { writeResultFile } from './result-file.ts';

/** What {@link runTest} needs besides the configuration. */
export interface RunDependencies {
  /** Makes the backend, given the k6 binary and a private work folder. */
  createBackend(k6Binary: string, workDir: string): Backend;
  log: Logger;
  signal?: AbortSignal;
  environment?: Partial<RunEnvironment>;
}

/**
 * The main job, for any backend: preflight (k6 archive + inspect), plan N runners, run them with a
 * synchronised start, aggregate, judge the thresholds globally, and write the result JSON
 * atomically to `config.resultPath`. The private work folder (archive, logs, summaries) is removed
 * at the end.
 * @throws ConfigurationError for bad input (before any runner starts, or from a runner that could
 *   not initialise the script); RunStartError when the runners could not be started.
 */
export async function runTest(config: RunConfig, deps: RunDependencies): Promise<RunResult> {
  const k6Binary = resolveK6Binary(config.k6Binary);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'k6-distributed-'));
  try {
    const pre = await preflight({ k6Binary, script: config.script, k6Args: config.k6Args, workDir });
    const plan = planRun({
      runners: config.runners,
      maxVUs: pre.maxVUs,
      extraPercentiles: thresholdPercentiles(pre.thresholds),
      userRunArgs: pre.runArgs,
      tags: pre.tags,
    });
    deps.log.info(
      `preflight ok: k6 ${pre.k6Version}, ${pre.maxVUs} VUs at most, totalDuration ${pre.totalDurationS} s, ` +
        `${pre.thresholds.length} thresholds; ${plan.runners.length} runners`,
    );
    for (const warning of [...plan.warnings, ...pre.warnings, ...splittingWarnings(pre, plan.runners.length)])
      deps.log.warn(warning);
    const result = await runDistributed({
      script: config.script,
      preflight: pre,
      plan,
      backend: deps.createBackend(k6Binary, workDir),
      log: deps.log,
      startTimeoutS: config.startTimeoutS,
      graceS: config.graceS,
      progressIntervalS: config.progressIntervalS,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.environment ? { environment: deps.environment } : {}),
    });
    applyDeclaredContains(result.metrics, pre.declaredContains);
    await writeResultFile(config.resultPath, result);
    return result;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
