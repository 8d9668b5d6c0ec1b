import { z } from 'zod';
import { ConfigurationError } from '../../errors.ts';
import { DEFAULTS } from '../../inputs/defaults.ts';
import { parseInputs } from '../../inputs/parse.ts';
import { booleanInput } from '../../inputs/values.ts';
import {
  parseReportInputs,
  INPUT_NAMES as REPORT_INPUT_NAMES,
  type ReportActionInputs,
} from '../report/inputs.ts';
import { type GetInput, readRunInputs } from '../run/inputs.ts';

/**
 * The inputs of the root action (action.yml): every input of actions/run under its own name, every
 * input of actions/report but `result` (the report reads this run's `result-path`), and `report`.
 * All of them are validated here, before any runner starts, so a typo in `gate` does not cost a
 * whole load test.
 */

/** The validated inputs the root action itself acts on (the run's runner reads its own again). */
export interface MainInputs {
  /** Where the run writes its result JSON, and the report reads it. */
  resultPath: string;
  /** Whether the step writes a job summary at all. */
  jobSummary: boolean;
  /** The report's inputs; undefined with `report: false`. */
  report?: ReportActionInputs;
}

/** The root action's own inputs. */
const rootInputs = z.object({ report: booleanInput.default(DEFAULTS.report) });

/**
 * Reads and validates every input of the root action.
 * @throws ConfigurationError for the first invalid input, in one line that names it.
 */
export function readMainInputs(getInput: GetInput): MainInputs {
  const run = readRunInputs(getInput);
  const { report } = parseInputs(rootInputs, { report: getInput('report') });
  const inputs: MainInputs = { resultPath: run.config.resultPath, jobSummary: run.jobSummary };
  if (report) {
    const raw = Object.fromEntries(
      REPORT_INPUT_NAMES.filter((name) => name !== 'result').map((name) => [name, getInput(name)]),
    );
    inputs.report = parseReportInputs({ ...raw, result: run.config.resultPath });
  }
  return inputs;
}

/**
 * Refuses A/B rounds with report mode `store` (given, or `auto` on a push): an A/B result is
 * reported on a pull request (modes comment and bundle), and `store` keeps single runs as
 * baselines. Checked before any runner starts.
 * @param mode the report's mode with `auto` resolved; undefined with `report: false`.
 * @throws ConfigurationError naming `ab-rounds`.
 */
export function checkAbReportMode(abRounds: boolean, mode: string | undefined): void {
  if (abRounds && mode === 'store')
    throw new ConfigurationError(
      'ab-rounds: A/B rounds are reported on a pull request (report mode comment or bundle), and report mode store keeps single runs as baselines; set report: false, or run them on pull requests',
    );
}
