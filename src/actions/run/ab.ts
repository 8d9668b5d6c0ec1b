import { buildAbResult } from '../../compare/ab-result.ts';
import type { RunConfig } from '../../config.ts';
import { writeOutputFile } from '../../output-file.ts';
import { renderAbReport } from '../../render/paired.ts';
import type { AbResult } from '../../result/ab-schema.ts';
import { type AbSpec, runAbRounds } from '../../run/ab.ts';
import type { StepFailure } from '../common/failure.ts';
import type { RunActionInputs } from './inputs.ts';
import type { RunActionDeps, RunActionOutcome } from './outcome.ts';
import { runScript } from './run-script.ts';

/**
 * The run action with `ab-rounds`: K interleaved rounds of one script (src/run/ab.ts), each a
 * whole distributed run on the step's backend with a run id of its own, and one A/B result
 * (src/result/ab-schema.ts) at `result-path` for the report action to judge on its pairs.
 *
 * Outputs: `ab-verdict` is the paired verdict (at the default level, tolerances and gate; the
 * report action judges again with its own); `verdict`/`thresholds-ok` say whether every round passed
 * its own thresholds; `rps`, `p95`, `p99`, `error-rate` are B's (the head's) medians over its rounds;
 * `run-id` lists the rounds' run ids, comma-separated; no HTML report. The step fails when a round
 * failed for a reason other than its thresholds (a runner, the start) or the rounds were
 * interrupted; thresholds crossed in a round are shown and judged by the report, not here.
 */

/** The outputs of an A/B result (see the file's comment). Units as `runOutputs` (outcome.ts). */
export function abOutputs(ab: AbResult, resultPath: string): Record<string, string> {
  const head = ab.b.aggregate;
  const passed = ab.rounds.every((r) => r.verdict === 'passed');
  return {
    verdict: passed ? 'passed' : 'failed',
    'thresholds-ok': String(passed),
    'result-path': resultPath,
    'html-report': '',
    'run-id': ab.rounds.flatMap((r) => (r.runId ? [r.runId] : [])).join(','),
    rps: String(head.rps ?? 0),
    p95: String(head.p95 ?? 0),
    p99: String(head.p99 ?? 0),
    'error-rate': String(head['error-rate'] ?? 0),
    'start-skew': '0',
    'ab-verdict': ab.paired.verdict,
  };
}

/** The step's failure for the rounds, or undefined (see the file's comment). */
function abFailure(
  ab: AbResult,
  interrupted: boolean,
  kinds: ReadonlyArray<readonly string[]>,
): StepFailure | undefined {
  if (interrupted)
    return { message: `A/B rounds interrupted after ${ab.rounds.length} rounds`, kinds: ['interrupted'] };
  const failed = ab.rounds.filter((_r, i) => kinds[i]!.some((k) => k !== 'thresholds'));
  if (!failed.length) return undefined;
  return {
    message: `A/B rounds failed: ${failed.map((r) => `round ${r.round} (${r.side}): ${r.failures.join('; ')}`).join('; ')}`,
    kinds: ['runner'],
  };
}

/**
 * Runs the A/B rounds of one script and writes its A/B result.
 * @param runIds the step's run ids so far; each round's is added (the post step reads them).
 * @throws what runTest throws (ConfigurationError before the first round's load, RunError `start`).
 */
export async function runAbStep(
  inputs: RunActionInputs & { ab: AbSpec },
  config: RunConfig,
  runIds: string[],
  jobSummary: boolean,
  deps: RunActionDeps,
): Promise<RunActionOutcome> {
  const ran = await runAbRounds(
    config,
    inputs.ab,
    { log: deps.log, signal: deps.signal },
    (round) => runScript(inputs, round, runIds, deps.log, deps),
    deps.checkAbSide,
  );
  if (!ran.rounds.length)
    return {
      outputs: {},
      failure: { message: 'A/B rounds interrupted before the first round', kinds: ['interrupted'] },
    };
  const ab = buildAbResult({ script: config.script, a: inputs.ab.a, b: inputs.ab.b, ...ran });
  await writeOutputFile(config.resultPath, `${JSON.stringify(ab, null, 2)}\n`);
  deps.log.info(`A/B result written to ${config.resultPath}: ${ab.paired.verdict} (${ab.paired.reason})`);
  const summary = renderAbReport(ab);
  const failure = abFailure(
    ab,
    ran.interrupted,
    ran.rounds.map((r) => r.result.failureKinds ?? []),
  );
  return {
    outputs: {
      ...abOutputs(ab, config.resultPath),
      'junit-path': '',
      results: JSON.stringify([
        { script: config.script, verdict: failure ? 'failed' : 'passed', 'result-path': config.resultPath },
      ]),
    },
    ...(jobSummary ? { jobSummary: { markdown: summary, required: true } } : {}),
    ...(failure ? { failure } : {}),
    ran: {
      runs: [{ script: config.script, resultPath: config.resultPath, ab }],
      summary,
      cancelled: deps.signal.aborted,
    },
  };
}
