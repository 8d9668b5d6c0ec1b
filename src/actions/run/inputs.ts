import type { V1Toleration } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { CleanupPolicy } from '../../backends/kubernetes/backend.ts';
import type { Resources, RunnerEnv, Spread } from '../../backends/kubernetes/manifests.ts';
import { parseRunConfig, type RunConfig } from '../../config.ts';
import { ConfigurationError } from '../../errors.ts';
import { PINNED_K6_VERSION } from '../../k6/binary.ts';

/**
 * The `run` action's inputs (actions/run/action.yml), read and validated in one place. Every
 * error names the input and says what is wrong, on one line.
 */

/** The default runner image: the k6 release this project pins. */
export const DEFAULT_RUNNER_IMAGE = `grafana/k6:${PINNED_K6_VERSION.replace(/^v/, '')}`;

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

/** Parses `KEY=value` lines (blank lines and `#` comments skipped). */
export function parseKeyValueLines(input: string, text: string | undefined): Array<[string, string]> {
  if (!text) return [];
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((line) => {
      const eq = line.indexOf('=');
      if (eq <= 0) throw new ConfigurationError(`${input}: "${line}" is not KEY=value`);
      return [line.slice(0, eq).trim(), line.slice(eq + 1).trim()];
    });
}

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

function yamlInput<T>(
  input: string,
  text: string | undefined,
  schema: z.ZodType<T>,
  example: string,
): T | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ConfigurationError(`${input}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigurationError(
      `${input}: ${issue.path.join('.') || 'value'}: ${issue.message} (expected e.g. ${example})`,
    );
  }
  return parsed.data;
}

function oneOf<T extends string>(
  input: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (!value) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigurationError(`${input}: "${value}" is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function seconds(input: string, value: string | undefined, fallback: number): number {
  if (!value) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new ConfigurationError(`${input}: "${value}" is not a number of seconds above 0`);
  return n;
}

/**
 * Reads and validates every input of the run action.
 * @throws ConfigurationError for the first invalid input.
 */
export function readRunInputs(getInput: GetInput): RunActionInputs {
  const get = (name: string) => getInput(name).trim() || undefined;
  const config = parseRunConfig({
    script: get('script'),
    runners: get('runners'),
    k6Args: get('k6-args'),
    resultPath: get('result-path'),
    startTimeoutS: get('start-timeout'),
    graceS: get('grace'),
    progressIntervalS: get('progress-interval'),
  });
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
    backend: oneOf('backend', get('backend'), ['kubernetes', 'local'] as const, 'kubernetes'),
    image: get('runner-image') ?? DEFAULT_RUNNER_IMAGE,
    env,
    nodeSelector: labelMap('node-selector', get('node-selector')),
    tolerations:
      yamlInput(
        'tolerations',
        get('tolerations'),
        z.array(tolerationSchema),
        '[{key: pool, operator: Equal, value: loadtest, effect: NoSchedule}]',
      ) ?? [],
    spread: oneOf('spread', get('spread'), ['one-per-node', 'even', 'none'] as const, 'one-per-node'),
    labels: labelMap('labels', get('labels')),
    sysctls: parseKeyValueLines('sysctls', get('sysctls')).map(([name, value]) => {
      if (!SYSCTL_NAME.test(name)) throw new ConfigurationError(`sysctls: "${name}" is not a sysctl name`);
      return { name, value };
    }),
    cleanup: oneOf('cleanup', get('cleanup'), ['always', 'on-success', 'never'] as const, 'always'),
    scheduleTimeoutS: seconds('schedule-timeout', get('schedule-timeout'), 120),
    jobSummary: oneOf('job-summary', get('job-summary'), ['true', 'false'] as const, 'true') === 'true',
  };
  const resources = yamlInput(
    'resources',
    get('resources'),
    resourcesSchema,
    '{requests: {cpu: "2", memory: 2Gi}, limits: {memory: 4Gi}}',
  );
  if (resources) inputs.resources = resources;
  const kubeconfig = get('kubeconfig');
  if (kubeconfig) inputs.kubeconfig = kubeconfig;
  const context = get('context');
  if (context) inputs.context = context;
  const namespace = get('namespace');
  if (namespace) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace) || namespace.length > 63) {
      throw new ConfigurationError(`namespace: "${namespace}" is not a valid namespace name`);
    }
    inputs.namespace = namespace;
  }
  return inputs;
}
