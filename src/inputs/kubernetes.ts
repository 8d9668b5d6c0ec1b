import type { KubeConfig, V1Toleration } from '@kubernetes/client-node';
import { z } from 'zod';
import type {
  CleanupPolicy,
  KubernetesBackendOptions,
  PodOptions,
  Resources,
  RunnerEnv,
  Spread,
} from '../backends/kubernetes/options.ts';
import { checkPodPatch, type PodPatch } from '../backends/kubernetes/pod-patch.ts';
import { ConfigurationError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { RunEnvironment } from '../result/schema.ts';
import { DEFAULTS } from './defaults.ts';
import { parseInputs } from './parse.ts';
import { oneOf, parseKeyValueLines, parseYamlInput, positiveSeconds } from './values.ts';

/**
 * The Kubernetes backend's inputs, read and validated once for the run action, the root action and
 * the CLI. Each is named as the actions name it (`node-selector`); the CLI's flag is the same name
 * with `--` in front (`--node-selector`), and every error names the input or flag as the caller's
 * user wrote it (the `name` argument of {@link parseKubernetesInputs}).
 */

/** Every input of the Kubernetes backend, by its action name (the CLI flag is `--<name>`). */
export const KUBERNETES_INPUTS = [
  'kubeconfig',
  'context',
  'namespace',
  'runner-image',
  'interval-receiver-image',
  'env',
  'secret-env',
  'node-selector',
  'tolerations',
  'spread',
  'resources',
  'barrier-resources',
  'sysctls',
  'labels',
  'pod-annotations',
  'image-pull-secrets',
  'service-account',
  'priority-class',
  'pod-patch',
  'schedule-timeout',
  'cleanup',
] as const;

/** One input of {@link KUBERNETES_INPUTS}. */
export type KubernetesInput = (typeof KUBERNETES_INPUTS)[number];

/** The validated Kubernetes inputs (what {@link kubernetesBackendOptions} turns into backend options). */
export interface KubernetesInputs extends PodOptions {
  /** The `kubeconfig` input as given: YAML or base64 in an action, a file path on the CLI. */
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  image: string;
  /** The interval receiver's image; undefined when turned off (`none`). */
  receiverImage?: string;
  env: RunnerEnv[];
  nodeSelector: Record<string, string>;
  tolerations: V1Toleration[];
  spread: Spread;
  resources?: Resources;
  labels: Record<string, string>;
  sysctls: Array<{ name: string; value: string }>;
  cleanup: CleanupPolicy;
  /** How long a runner Pod may stay unschedulable, in s. */
  scheduleTimeoutS: number;
}

/** Reads one input by its action name; undefined (or '') when not given. */
export type ReadInput = (input: KubernetesInput) => string | undefined;

/** Label keys, and annotation keys (the same syntax): https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set */
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
/** A sysctl name as Kubernetes validates it (`.` or `/` separated segments). */
const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
/**
 * An object name that is a DNS subdomain (RFC 1123), as Secrets, ServiceAccounts and
 * PriorityClasses are named: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-subdomain-names
 */
const SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const tolerationSchema = z
  .object({
    key: z.string().optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .strict();

/**
 * A resource quantity (`2`, `500m`, `4Gi`), checked as the API server's decoder checks it
 * (k8s.io/apimachinery `resource.Quantity`), which otherwise refuses the whole Pod without naming
 * the field.
 */
const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const quantity = z
  .union([z.string(), z.number()])
  .transform(String)
  .refine((v) => QUANTITY.test(v), {
    error: (issue) => `"${String(issue.input)}" is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)`,
  });
const resourcesSchema = z
  .object({
    requests: z.record(z.string(), quantity).optional(),
    limits: z.record(z.string(), quantity).optional(),
  })
  .strict();
const RESOURCES_EXAMPLE = '{requests: {cpu: "2", memory: 2Gi}, limits: {memory: 4Gi}}';

/** The single-value inputs, by input name. */
const scalarInputs = z.object({
  'runner-image': z.string().default(DEFAULTS.runnerImage),
  'interval-receiver-image': z.string().default(DEFAULTS.intervalReceiverImage),
  spread: oneOf(['one-per-node', 'even', 'none']).default(DEFAULTS.spread),
  cleanup: oneOf(['always', 'on-success', 'never']).default(DEFAULTS.cleanup),
  'schedule-timeout': positiveSeconds.default(DEFAULTS.scheduleTimeoutS),
  kubeconfig: z.string().optional(),
  context: z.string().optional(),
  namespace: z
    .string()
    .max(63, { error: (issue) => `"${String(issue.input)}" is not a valid namespace name` })
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
      error: (issue) => `"${String(issue.input)}" is not a valid namespace name`,
    })
    .optional(),
  'service-account': z
    .string()
    .regex(SUBDOMAIN, { error: (issue) => `"${String(issue.input)}" is not a valid ServiceAccount name` })
    .optional(),
  'priority-class': z
    .string()
    .regex(SUBDOMAIN, { error: (issue) => `"${String(issue.input)}" is not a valid PriorityClass name` })
    .optional(),
});

/** `key=value` lines whose keys are label or annotation keys; values are checked as label values when `labelValues`. */
function qualifiedMap(input: string, text: string | undefined, labelValues: boolean): Record<string, string> {
  const pairs = parseKeyValueLines(input, text);
  for (const [k, v] of pairs) {
    if (!QUALIFIED_NAME.test(k))
      throw new ConfigurationError(
        `${input}: "${k}" is not a valid ${labelValues ? 'label' : 'annotation'} key`,
      );
    if (labelValues && !LABEL_VALUE.test(v))
      throw new ConfigurationError(`${input}: "${v}" is not a valid label value for ${k}`);
  }
  return Object.fromEntries(pairs);
}

/** An example of the `pod-patch` input, for its errors. */
const POD_PATCH_EXAMPLE = '{spec: {containers: [{name: k6, envFrom: [{configMapRef: {name: settings}}]}]}}';

/**
 * The `pod-patch` input: a YAML map shaped like a Pod, checked (pod-patch.ts `checkPodPatch`) before
 * anything is created. Undefined when not given.
 * @throws ConfigurationError naming `input`: not YAML, not a map, or a field k6-distributed owns.
 */
function podPatch(input: string, text: string | undefined): PodPatch | undefined {
  const patch = parseYamlInput(input, text, z.record(z.string(), z.unknown()), POD_PATCH_EXAMPLE);
  if (!patch) return undefined;
  checkPodPatch(patch as PodPatch, input);
  return patch as PodPatch;
}

/** `a`, `a,b` or one name per line: names of Secrets. */
function secretNames(input: string, text: string | undefined): string[] {
  const names = (text ?? '')
    .split(/[\n,]/)
    .map((n) => n.trim())
    .filter((n) => n && !n.startsWith('#'));
  for (const n of names)
    if (!SUBDOMAIN.test(n)) throw new ConfigurationError(`${input}: "${n}" is not a valid Secret name`);
  return names;
}

/**
 * Reads and validates the Kubernetes inputs.
 * @param get reads an input by its action name.
 * @param name how the caller's user names an input: itself in an action, `--<input>` on the CLI.
 * @throws ConfigurationError one line naming the input as `name` gives it
 *   (`--spread: "random" is not one of one-per-node, even, none`).
 */
export function parseKubernetesInputs(
  get: ReadInput,
  name: (input: KubernetesInput) => string = (i) => i,
): KubernetesInputs {
  const text = (input: KubernetesInput) => get(input)?.trim() || undefined;
  const scalars = parseInputs(
    scalarInputs,
    Object.fromEntries(
      Object.keys(scalarInputs.shape).map((input) => [input, text(input as KubernetesInput)]),
    ),
    Object.fromEntries(
      Object.keys(scalarInputs.shape).map((input) => [input, name(input as KubernetesInput)]),
    ),
  );
  const env: RunnerEnv[] = parseKeyValueLines(name('env'), text('env')).map(([variable, value]) => {
    if (!ENV_NAME.test(variable))
      throw new ConfigurationError(`${name('env')}: "${variable}" is not a valid variable name`);
    return { name: variable, value };
  });
  for (const [variable, ref] of parseKeyValueLines(name('secret-env'), text('secret-env'))) {
    if (!ENV_NAME.test(variable))
      throw new ConfigurationError(`${name('secret-env')}: "${variable}" is not a valid variable name`);
    const slash = ref.indexOf('/');
    if (slash <= 0 || slash === ref.length - 1) {
      throw new ConfigurationError(
        `${name('secret-env')}: "${variable}=${ref}" must be NAME=secret-name/key`,
      );
    }
    env.push({ name: variable, secret: ref.slice(0, slash), key: ref.slice(slash + 1) });
  }
  const receiverImage = scalars['interval-receiver-image'];
  const inputs: KubernetesInputs = {
    image: scalars['runner-image'],
    ...(receiverImage === 'none' ? {} : { receiverImage }),
    env,
    nodeSelector: qualifiedMap(name('node-selector'), text('node-selector'), true),
    tolerations:
      parseYamlInput(
        name('tolerations'),
        text('tolerations'),
        z.array(tolerationSchema),
        '[{key: pool, operator: Equal, value: loadtest, effect: NoSchedule}]',
      ) ?? [],
    spread: scalars.spread,
    labels: qualifiedMap(name('labels'), text('labels'), true),
    sysctls: parseKeyValueLines(name('sysctls'), text('sysctls')).map(([sysctl, value]) => {
      if (!SYSCTL_NAME.test(sysctl))
        throw new ConfigurationError(`${name('sysctls')}: "${sysctl}" is not a sysctl name`);
      return { name: sysctl, value };
    }),
    cleanup: scalars.cleanup,
    scheduleTimeoutS: scalars['schedule-timeout'],
  };
  const resources = parseYamlInput(name('resources'), text('resources'), resourcesSchema, RESOURCES_EXAMPLE);
  if (resources) inputs.resources = resources;
  const barrierResources = parseYamlInput(
    name('barrier-resources'),
    text('barrier-resources'),
    resourcesSchema,
    '{requests: {cpu: 10m, memory: 32Mi}, limits: {memory: 256Mi}}',
  );
  if (barrierResources) inputs.barrierResources = barrierResources;
  const patch = podPatch(name('pod-patch'), text('pod-patch'));
  if (patch) inputs.podPatch = patch;
  const annotations = qualifiedMap(name('pod-annotations'), text('pod-annotations'), false);
  if (Object.keys(annotations).length > 0) inputs.podAnnotations = annotations;
  const pullSecrets = secretNames(name('image-pull-secrets'), text('image-pull-secrets'));
  if (pullSecrets.length > 0) inputs.imagePullSecrets = pullSecrets;
  if (scalars['service-account']) inputs.serviceAccountName = scalars['service-account'];
  if (scalars['priority-class']) inputs.priorityClassName = scalars['priority-class'];
  if (scalars.kubeconfig) inputs.kubeconfig = scalars.kubeconfig;
  if (scalars.context) inputs.context = scalars.context;
  if (scalars.namespace) inputs.namespace = scalars.namespace;
  return inputs;
}

/**
 * How long Kubernetes lets a runner Pod live (`activeDeadlineSeconds`), in s, when its launch gives
 * no lifetime (every run gives one: src/run/launch.ts `runLifetimeS`).
 */
export const ACTIVE_DEADLINE_S = 24 * 3600;

/**
 * The {@link KubernetesBackendOptions} of a run from its validated inputs, for the actions and the
 * CLI alike.
 * @param kc the loaded credentials; `namespace` the namespace they resolve to.
 */
export function kubernetesBackendOptions(
  inputs: KubernetesInputs,
  run: { kc: KubeConfig; namespace: string; runId: string; log: Logger },
): KubernetesBackendOptions {
  return {
    ...run,
    image: inputs.image,
    ...(inputs.receiverImage ? { receiverImage: inputs.receiverImage } : {}),
    placement: { nodeSelector: inputs.nodeSelector, tolerations: inputs.tolerations, spread: inputs.spread },
    ...(inputs.resources ? { resources: inputs.resources } : {}),
    ...(inputs.barrierResources ? { barrierResources: inputs.barrierResources } : {}),
    ...(inputs.imagePullSecrets ? { imagePullSecrets: inputs.imagePullSecrets } : {}),
    ...(inputs.serviceAccountName ? { serviceAccountName: inputs.serviceAccountName } : {}),
    ...(inputs.podAnnotations ? { podAnnotations: inputs.podAnnotations } : {}),
    ...(inputs.priorityClassName ? { priorityClassName: inputs.priorityClassName } : {}),
    ...(inputs.podPatch ? { podPatch: inputs.podPatch } : {}),
    env: inputs.env,
    labels: inputs.labels,
    sysctls: inputs.sysctls,
    cleanup: inputs.cleanup,
    scheduleTimeoutS: inputs.scheduleTimeoutS,
    activeDeadlineSeconds: ACTIVE_DEADLINE_S,
  };
}

/** What the result JSON records about the runners of a Kubernetes run (`environment`). */
export function kubernetesEnvironment(inputs: KubernetesInputs): Partial<RunEnvironment> {
  return {
    runnerImage: inputs.image,
    nodeSelector: inputs.nodeSelector,
    ...(inputs.resources ? { resources: { ...inputs.resources } } : {}),
  };
}
