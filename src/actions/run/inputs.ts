import { parseArgsStringToArgv } from 'string-argv';
import { z } from 'zod';
import { parseRunConfig, RUN_CONFIG_INPUTS, type RunConfig } from '../../config.ts';
import { ConfigurationError } from '../../errors.ts';
import { DEFAULTS } from '../../inputs/defaults.ts';
import { KUBERNETES_INPUTS, type KubernetesInputs, parseKubernetesInputs } from '../../inputs/kubernetes.ts';
import { parseInputs } from '../../inputs/parse.ts';
import { booleanInput, oneOf, parseKeyValueLines, unclosedQuote } from '../../inputs/values.ts';
import { parseZones, type ZoneInputs } from '../../inputs/zones.ts';
import { parseDashboardUrl } from '../../render/dashboard.ts';
import { type AbSpec, checkSidesDiffer, parseRounds } from '../../run/ab.ts';

/**
 * The `run` action's inputs (actions/run/action.yml), read and validated in one place: the run
 * configuration (config.ts), the Kubernetes backend's inputs (inputs/kubernetes.ts, shared with the
 * CLI) and the action's own. Every error names the input and says what is wrong, on one line.
 */

/** The default runner image: the k6 release this project pins. */
export const DEFAULT_RUNNER_IMAGE = DEFAULTS.runnerImage;

/** Everything the run action needs besides the core run configuration. */
export interface RunActionInputs extends KubernetesInputs {
  config: RunConfig;
  backend: 'kubernetes' | 'local';
  jobSummary: boolean;
  /**
   * The `parallel` input: several scripts run at once, each its own distributed test, instead of
   * one after another (they share the machine or the cluster and skew each other's latency).
   * Set only when true (absent: one after another).
   */
  parallel?: true;
  /** The `dashboard-url` input: a link with the run's time range in the job summary (src/render/dashboard.ts). */
  dashboardUrl?: string;
  /** `ab-rounds` and its sides: interleaved A/B rounds instead of one run (src/actions/run/ab.ts). */
  ab?: AbSpec;
  /**
   * The `zones` input (src/inputs/zones.ts): one test over several clusters by share, each zone
   * with its own Kubernetes inputs over the step's; absent without it.
   */
  zones?: ZoneInputs[];
}

/** The inputs of A/B rounds. */
const AB_INPUTS = ['ab-rounds', 'ab-a-env', 'ab-b-env', 'ab-a-k6-args', 'ab-b-k6-args'] as const;

/**
 * `ab-rounds` (K), `ab-a-env`/`ab-b-env` (`KEY=value` lines for A, the base, and B, the head) and
 * `ab-a-k6-args`/`ab-b-k6-args` (k6 flags for one side, shell-quoted); undefined without `ab-rounds`.
 * @throws ConfigurationError naming the input: a side's input without `ab-rounds`, a bad K or
 *   line, an unclosed quote, or two sides that are the same.
 */
function readAbInputs(get: (name: string) => string | undefined): AbSpec | undefined {
  const rounds = get('ab-rounds');
  if (rounds === undefined) {
    const stray = AB_INPUTS.find((name) => get(name) !== undefined);
    if (stray) throw new ConfigurationError(`${stray}: is for A/B rounds; give ab-rounds too (e.g. 6)`);
    return undefined;
  }
  const words = (input: string) => {
    const quote = unclosedQuote(get(input) ?? '');
    if (quote) throw new ConfigurationError(`${input}: ${quote}`);
    return parseArgsStringToArgv(get(input) ?? '');
  };
  const side = (label: string, env: string, k6Args: string) => ({
    label,
    env: Object.fromEntries(parseKeyValueLines(env, get(env))),
    k6Args: words(k6Args),
  });
  const spec: AbSpec = {
    rounds: parseRounds(rounds, 'ab-rounds'),
    a: side('base', 'ab-a-env', 'ab-a-k6-args'),
    b: side('head', 'ab-b-env', 'ab-b-k6-args'),
  };
  checkSidesDiffer(spec, 'ab-a-env/ab-b-env (or ab-a-k6-args/ab-b-k6-args)');
  return spec;
}

/** Reads one input; '' (unset) becomes undefined. */
export type GetInput = (name: string) => string;

/** The run action's own single-value inputs, by input name. */
const actionInputs = z.object({
  backend: oneOf(['kubernetes', 'local']).default(DEFAULTS.backend),
  'job-summary': booleanInput.default(DEFAULTS.jobSummary),
  parallel: booleanInput.default(false),
  'dashboard-url': z.string().optional(),
});

/**
 * Reads and validates every input of the run action.
 * @throws ConfigurationError naming the invalid input(s) on one line (`grace: must be more than 0 seconds`).
 */
export function readRunInputs(getInput: GetInput): RunActionInputs {
  const get = (name: string) => getInput(name).trim() || undefined;
  const config = parseRunConfig(
    Object.fromEntries(Object.entries(RUN_CONFIG_INPUTS).map(([key, input]) => [key, get(input)])),
    RUN_CONFIG_INPUTS,
  );
  const own = parseInputs(
    actionInputs,
    Object.fromEntries(Object.keys(actionInputs.shape).map((input) => [input, get(input)])),
  );
  const dashboardUrl = parseDashboardUrl(own['dashboard-url']);
  const ab = readAbInputs(get);
  if (ab && config.junitPath)
    throw new ConfigurationError(
      'junit-path: A/B rounds write one A/B result and no JUnit report; leave junit-path empty',
    );
  const zones = parseZones(get('zones'), get);
  if (zones && own.backend !== 'kubernetes')
    throw new ConfigurationError('zones: only with backend kubernetes');
  // Each A/B round is one run on the step's backend; rounds over several zones are not built.
  if (zones && ab) throw new ConfigurationError('zones: not with ab-rounds; give one of them');
  return {
    ...(zones ? { zones } : {}),
    config,
    backend: own.backend,
    jobSummary: own['job-summary'],
    ...(own.parallel ? { parallel: true as const } : {}),
    ...parseKubernetesInputs(get),
    ...(dashboardUrl ? { dashboardUrl } : {}),
    ...(ab ? { ab } : {}),
  };
}

/** Every input name the run action reads (the run configuration's, the Kubernetes backend's, its own). */
export const RUN_ACTION_INPUTS: readonly string[] = [
  ...Object.values(RUN_CONFIG_INPUTS),
  ...KUBERNETES_INPUTS,
  ...Object.keys(actionInputs.shape),
  ...AB_INPUTS,
  'zones',
];
