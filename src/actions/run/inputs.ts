import { z } from 'zod';
import { parseRunConfig, RUN_CONFIG_INPUTS, type RunConfig } from '../../config.ts';
import { ConfigurationError } from '../../errors.ts';
import { DEFAULTS } from '../../inputs/defaults.ts';
import { KUBERNETES_INPUTS, type KubernetesInputs, parseKubernetesInputs } from '../../inputs/kubernetes.ts';
import { parseInputs } from '../../inputs/parse.ts';
import { booleanInput, oneOf } from '../../inputs/values.ts';
import { parseZones, type ZoneInputs } from '../../inputs/zones.ts';
import { parseDashboardUrl } from '../../render/dashboard.ts';

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
  /**
   * The `zones` input (src/inputs/zones.ts): one test over several clusters by share, each zone
   * with its own Kubernetes inputs over the step's; absent without it.
   */
  zones?: ZoneInputs[];
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
  const zones = parseZones(get('zones'), get);
  if (zones && own.backend !== 'kubernetes')
    throw new ConfigurationError('zones: only with backend kubernetes');
  return {
    ...(zones ? { zones } : {}),
    config,
    backend: own.backend,
    jobSummary: own['job-summary'],
    ...(own.parallel ? { parallel: true as const } : {}),
    ...parseKubernetesInputs(get),
    ...(dashboardUrl ? { dashboardUrl } : {}),
  };
}

/** Every input name the run action reads (the run configuration's, the Kubernetes backend's, its own). */
export const RUN_ACTION_INPUTS: readonly string[] = [
  ...Object.values(RUN_CONFIG_INPUTS),
  ...KUBERNETES_INPUTS,
  ...Object.keys(actionInputs.shape),
  'zones',
];
