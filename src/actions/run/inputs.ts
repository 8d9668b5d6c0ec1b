import type { V1Toleration } from '@kubernetes/client-node';
import { z } from 'zod';
import type { CleanupPolicy } from '../../backends/kubernetes/backend.ts';
import type { Resources, RunnerEnv, Spread } from '../../backends/kubernetes/manifests.ts';
import { parseRunConfig, RUN_CONFIG_INPUTS, type RunConfig } from '../../config.ts';
import { ConfigurationError } from '../../errors.ts';
import { DEFAULTS } from '../../inputs/defaults.ts';
import { parseInputs } from '../../inputs/parse.ts';
import {
  booleanInput,
  oneOf,
  parseKeyValueLines,
  parseYamlInput,
  positiveSeconds,
} from '../../inputs/values.ts';

/**
 * The `run` action's inputs (actions/run/action.yml), read and validated in one place. Every
 * error names the input and says what is wrong, on one line.
 */

/** The default runner image: the k6 release this project pins. */
export const DEFAULT_RUNNER_IMAGE = DEFAULTS.runnerImage;

/** Everything the run action needs besides the core run configuration. */
export interface RunActionInputs {
  config: RunConfig;
  backend: 'kubernetes' | 'local';
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  image: string;
  env: RunnerEnv[];
  nodeSelector: Record<string, string>;
  tolerations: V1Toleration[];
  spread: Spread;
  resources?: Resources;
  labels: Record<string, string>;
  sysctls: Array<{ name: string; value: string }>;
  cleanup: CleanupPolicy;
  scheduleTimeoutS: number;
  jobSummary: boolean;
}

/** Reads one input; '' (unset) becomes undefined. */
export type GetInput = (name: string) => string;

const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
/** A sysctl name as Kubernetes validates it (`.` or `/` separated segments). */
const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;

/** Kubernetes label syntax (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set). */
function labelMap(input: string, text: string | undefined): Record<string, string> {
  const pairs = parseKeyValueLines(input, text);
  for (const [k, v] of pairs) {
    if (!LABEL_KEY.test(k)) throw new ConfigurationError(`${input}: "${k}" is not a valid label key`);
    if (!LABEL_VALUE.test(v))
      throw new ConfigurationError(`${input}: "${v}" is not a valid label value for ${k}`);
  }
  return Object.fromEntries(pairs);
}

const tolerationSchema = z
  .object({
    key: z.string().optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .strict();

const quantity = z.union([z.string(), z.number()]).transform(String);
const resourcesSchema = z
  .object({
    requests: z.record(z.string(), quantity).optional(),
    limits: z.record(z.string(), quantity).optional(),
  })
  .strict();

/** The run action's single-value inputs besides the run configuration, by input name. */
const scalarInputs = z.object({
  backend: oneOf(['kubernetes', 'local']).default(DEFAULTS.backend),
  'runner-image': z.string().default(DEFAULTS.runnerImage),
  spread: oneOf(['one-per-node', 'even', 'none']).default(DEFAULTS.spread),
  cleanup: oneOf(['always', 'on-success', 'never']).default(DEFAULTS.cleanup),
  'schedule-timeout': positiveSeconds.default(DEFAULTS.scheduleTimeoutS),
  'job-summary': booleanInput.default(DEFAULTS.jobSummary),
  kubeconfig: z.string().optional(),
  context: z.string().optional(),
  namespace: z
    .string()
    .max(63, { error: (issue) => `"${String(issue.input)}" is not a valid namespace name` })
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
      error: (issue) => `"${String(issue.input)}" is not a valid namespace name`,
    })
    .optional(),
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
  const scalars = parseInputs(
    scalarInputs,
    Object.fromEntries(Object.keys(scalarInputs.shape).map((input) => [input, get(input)])),
  );
  const env: RunnerEnv[] = parseKeyValueLines('env', get('env')).map(([name, value]) => {
    if (!ENV_NAME.test(name)) throw new ConfigurationError(`env: "${name}" is not a valid variable name`);
    return { name, value };
  });
  for (const [name, ref] of parseKeyValueLines('secret-env', get('secret-env'))) {
    if (!ENV_NAME.test(name))
      throw new ConfigurationError(`secret-env: "${name}" is not a valid variable name`);
    const slash = ref.indexOf('/');
    if (slash <= 0 || slash === ref.length - 1) {
      throw new ConfigurationError(`secret-env: "${name}=${ref}" must be NAME=secret-name/key`);
    }
    env.push({ name, secret: ref.slice(0, slash), key: ref.slice(slash + 1) });
  }
  const inputs: RunActionInputs = {
    config,
    backend: scalars.backend,
    image: scalars['runner-image'],
    env,
    nodeSelector: labelMap('node-selector', get('node-selector')),
    tolerations:
      parseYamlInput(
        'tolerations',
        get('tolerations'),
        z.array(tolerationSchema),
        '[{key: pool, operator: Equal, value: loadtest, effect: NoSchedule}]',
      ) ?? [],
    spread: scalars.spread,
    labels: labelMap('labels', get('labels')),
    sysctls: parseKeyValueLines('sysctls', get('sysctls')).map(([name, value]) => {
      if (!SYSCTL_NAME.test(name)) throw new ConfigurationError(`sysctls: "${name}" is not a sysctl name`);
      return { name, value };
    }),
    cleanup: scalars.cleanup,
    scheduleTimeoutS: scalars['schedule-timeout'],
    jobSummary: scalars['job-summary'],
  };
  const resources = parseYamlInput(
    'resources',
    get('resources'),
    resourcesSchema,
    '{requests: {cpu: "2", memory: 2Gi}, limits: {memory: 4Gi}}',
  );
  if (resources) inputs.resources = resources;
  if (scalars.kubeconfig) inputs.kubeconfig = scalars.kubeconfig;
  if (scalars.context) inputs.context = scalars.context;
  if (scalars.namespace) inputs.namespace = scalars.namespace;
  return inputs;
}
