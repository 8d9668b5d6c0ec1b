import path from 'node:path';
import { runAction } from '../../../../../src/actions/run/action.ts';
import { readRunInputs } from '../../../../../src/actions/run/inputs.ts';
import type { RunActionDeps, RunActionOutcome } from '../../../../../src/actions/run/outcome.ts';
import type { RunResult } from '../../../../../src/result/schema.ts';
import { runDistributed } from '../../../../../src/run/index.ts';
import type { Preflight } from '../../../../../src/run/preflight.ts';
import { tempDir } from '../../../../support/cli.ts';
import {
  FakeBackend,
  FakeClock,
  type FakeRunnerScript,
  fakePlan,
  fakePreflight,
  recordingLogger,
} from '../../../run/support/fakes.ts';

/*
 * runAction with fake deps: the action's inputs as the runner gives them (INPUT_* values, read by
 * the real readRunInputs), runTest replaced by the orchestration itself (runDistributed) on a
 * FakeBackend and a FakeClock, so that a test of minutes runs in milliseconds. Preflight (k6
 * archive and inspect) is skipped: each script's fake preflight says its thresholds.
 */

/** How each script's test behaves: its runners, and the thresholds its options declare. */
export interface FakeScript {
  runners: FakeRunnerScript[];
  thresholds?: Record<string, string[]>;
}

/** A step of the run action with fakes, and what it did. */
export interface Harness {
  /** Runs the action's logic; `inputs` override `backend: local` and a result-path in a temp folder. */
  run(): Promise<RunActionOutcome>;
  deps: RunActionDeps;
  /** Aborts the step as a cancelled workflow does. */
  cancel(): void;
  log: ReturnType<typeof recordingLogger>;
  /** Every saveState call, in order. */
  state: Array<[string, string]>;
  /** The backends made, by script; and the runners' environment each local backend got. */
  backends: Map<string, FakeBackend>;
  localEnvs: Array<Record<string, string>>;
  /** The runTest calls: the script, and the run id it was given. */
  runs: Array<{ script: string; runId: string | undefined }>;
  /** The temp folder the result files go to. */
  dir: string;
}

/**
 * A run action step over fakes.
 * @param scripts how each script named by the `script` input behaves (by its name).
 * @param environment the step's environment (secret-env variables with backend local).
 */
export function harness(
  inputs: Record<string, string>,
  scripts: Record<string, FakeScript>,
  environment: NodeJS.ProcessEnv = {},
): Harness {
  const dir = tempDir('k6d-run-action-');
  const clock = new FakeClock();
  const controller = new AbortController();
  const log = recordingLogger();
  const given: Record<string, string> = {
    backend: 'local',
    'result-path': path.join(dir, 'result.json'),
    ...inputs,
  };
  const h: Omit<Harness, 'run' | 'deps'> = {
    cancel: () => controller.abort(),
    log,
    state: [],
    backends: new Map(),
    localEnvs: [],
    runs: [],
    dir,
  };
  let current = '';
  const backendOf = (): FakeBackend => {
    const backend = new FakeBackend(scripts[current]?.runners ?? [], clock);
    h.backends.set(current, backend);
    return backend;
  };
  const deps: RunActionDeps = {
    log,
    environment,
    cwd: dir,
    signal: controller.signal,
    given: (name) => (given[name] ?? '').trim() !== '',
    saveState: (name, value) => h.state.push([name, value]),
    backends: {
      local: (env) => {
        h.localEnvs.push(env);
        return backendOf;
      },
      kubernetes: () => ({ namespace: 'load', create: backendOf }),
    },
    runTest: async (config, d): Promise<RunResult> => {
      current = config.script;
      h.runs.push({ script: config.script, runId: d.runId });
      const fake = scripts[config.script];
      if (!fake) throw new Error(`no fake for script ${config.script}`);
      const preflight: Preflight = fakePreflight(10, fake.thresholds ?? {});
      const result = await runDistributed({
        script: config.script,
        preflight,
        plan: fakePlan(fake.runners.length),
        backend: d.createBackend('k6', dir),
        log: d.log,
        clock,
        graceS: 3600,
        ...(d.signal ? { signal: d.signal } : {}),
      });
      if (d.runId) result.runId = d.runId;
      return result;
    },
  };
  return {
    ...h,
    deps,
    run: () =>
      runAction(
        readRunInputs((name) => given[name] ?? ''),
        deps,
      ),
  };
}
