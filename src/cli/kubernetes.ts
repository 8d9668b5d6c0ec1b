import { existsSync, readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { ConfigurationError } from '../errors.ts';
import { DEFAULTS } from '../inputs/defaults.ts';
import {
  KUBERNETES_INPUTS,
  type KubernetesInput,
  type KubernetesInputs,
  parseKubernetesInputs,
} from '../inputs/kubernetes.ts';
import { parseZonesFile, type ZoneInputs } from '../inputs/zones.ts';
import type { Logger } from '../log.ts';
import type { KubernetesCliRun } from './kubernetes-run.ts';

/**
 * The CLI's Kubernetes flags: every input of the run action's Kubernetes backend
 * (inputs/kubernetes.ts) as `--<input>`, read and validated by the same code, so a flag takes the
 * values the action input takes and its errors name the flag (`--spread: "x" is not one of …`).
 * Two differences, as a command line expects: `--kubeconfig` is a file (as kubectl's), and the
 * inputs an action takes as lines (`node-selector`, `env`, …) are flags given once per value.
 */

/** How each Kubernetes input appears as a flag: its value's name, help, default, and whether it repeats. */
const FLAGS: Record<KubernetesInput, { value: string; help: string; repeat?: true; default?: string }> = {
  kubeconfig: {
    value: 'file',
    help: 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)',
  },
  context: { value: 'name', help: 'kubeconfig context (default: the current one)' },
  namespace: { value: 'name', help: "namespace of the runner Pods (default: the context's, or default)" },
  'runner-image': { value: 'image', help: 'container image of the runners', default: DEFAULTS.runnerImage },
  'interval-receiver-image': {
    value: 'image',
    help: "Node image of each runner Pod's latency-per-interval receiver, or none",
    default: DEFAULTS.intervalReceiverImage,
  },
  env: { value: 'NAME=value', help: 'environment variable of the runner Pods (repeatable)', repeat: true },
  'secret-env': {
    value: 'NAME=secret/key',
    help: 'environment variable from a Secret in the namespace (repeatable)',
    repeat: true,
  },
  'node-selector': {
    value: 'key=value',
    help: 'node label the runners must land on (repeatable)',
    repeat: true,
  },
  tolerations: { value: 'yaml', help: 'tolerations as a YAML list: [{key: pool, operator: Exists}]' },
  spread: { value: 'mode', help: 'one-per-node, even or none', default: DEFAULTS.spread },
  resources: { value: 'yaml', help: 'resources of each runner: {limits: {memory: 4Gi}}' },
  'barrier-resources': { value: 'yaml', help: "resources of each runner's barrier container" },
  sysctls: { value: 'name=value', help: 'sysctl of the runner Pods (repeatable)', repeat: true },
  labels: { value: 'key=value', help: 'extra label of every object of the run (repeatable)', repeat: true },
  'pod-annotations': { value: 'key=value', help: 'annotation of the runner Pods (repeatable)', repeat: true },
  'image-pull-secrets': {
    value: 'names',
    help: 'Secrets to pull the runner image with, comma-separated (repeatable)',
    repeat: true,
  },
  'service-account': { value: 'name', help: 'ServiceAccount of the runner Pods (its token is not mounted)' },
  'priority-class': { value: 'name', help: 'PriorityClass of the runner Pods' },
  'pod-patch': {
    value: 'file or yaml',
    help: 'strategic merge patch of every runner Pod (volumes, envFrom, affinity, initContainers, …)',
  },
  'schedule-timeout': {
    value: 's',
    help: 'seconds a runner Pod may stay unschedulable',
    default: String(DEFAULTS.scheduleTimeoutS),
  },
  cleanup: {
    value: 'policy',
    help: 'always, on-success (keep them when a runner failed) or never',
    default: DEFAULTS.cleanup,
  },
};

const flagOf = (input: KubernetesInput) => `--${input}`;

/** Adds `--backend` and every Kubernetes flag to `command`, under a help group of their own. */
export function addKubernetesOptions(command: Command): Command {
  command.addOption(
    new Option(
      '--backend <backend>',
      'local (k6 processes here) or kubernetes (runner Pods on a cluster)',
    ).default(DEFAULTS.cliBackend),
  );
  for (const input of KUBERNETES_INPUTS) {
    const flag = FLAGS[input];
    const option = new Option(`${flagOf(input)} <${flag.value}>`, flag.help).helpGroup(
      'Kubernetes (with --backend kubernetes):',
    );
    if (flag.repeat)
      option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    if (flag.default !== undefined) option.default(flag.default);
    command.addOption(option);
  }
  command.addOption(
    new Option(
      '--zones <file>',
      "load zones: a YAML list of zones, each with its kubeconfig/context, namespace, share (percent), runners and its own Kubernetes inputs (docs/kubernetes.md); --runners is then the zones' sum",
    ).helpGroup('Kubernetes (with --backend kubernetes):'),
  );
  return command;
}

/**
 * Reads `--zones` (a YAML file, src/inputs/zones.ts) with the run's Kubernetes flags as every
 * zone's defaults.
 * @returns the zones and the file, or undefined without `--zones`.
 * @throws ConfigurationError naming `--zones` (a missing file, a zone's bad value, shares that do not
 *   add up to 100), or `--runners` given with it.
 */
export function readZonesFlag(
  command: Command,
  kubernetes: KubernetesInputs | undefined,
): { zones: ZoneInputs[]; file: string } | undefined {
  const values = command.opts<Record<string, unknown>>();
  const file = values.zones as string | undefined;
  if (file === undefined) return undefined;
  if (!kubernetes) throw new ConfigurationError('--zones: only with --backend kubernetes');
  if (command.getOptionValueSource('runners') === 'cli')
    throw new ConfigurationError(
      '--runners: not with --zones (each zone gives its runners; the run has their sum)',
    );
  const zones = parseZonesFile(file, (input) => {
    const value = values[attribute(input)];
    if (input === 'pod-patch' && typeof value === 'string') return podPatchText(value);
    return Array.isArray(value) ? value.join('\n') : (value as string | undefined);
  });
  return { zones, file };
}

/** The attribute commander stores a flag's value under (`--node-selector` -> `nodeSelector`). */
function attribute(input: KubernetesInput): string {
  return new Option(`${flagOf(input)} <v>`).attributeName();
}

/**
 * Reads the Kubernetes flags of a parsed `run` command.
 * @returns the validated inputs with `--backend kubernetes`; undefined with `--backend local`.
 * @throws ConfigurationError naming the flag: an invalid value, an unknown backend, or a Kubernetes
 *   flag given with the local backend (it would be ignored without a word).
 */
export function readKubernetesFlags(command: Command): KubernetesInputs | undefined {
  const values = command.opts<Record<string, unknown>>();
  const backend = values.backend;
  if (backend !== 'local' && backend !== 'kubernetes')
    throw new ConfigurationError(`--backend: "${String(backend)}" is not one of local, kubernetes`);
  if (backend === 'local') {
    const given = KUBERNETES_INPUTS.find((input) => command.getOptionValueSource(attribute(input)) === 'cli');
    if (given) throw new ConfigurationError(`${flagOf(given)}: only with --backend kubernetes`);
    return undefined;
  }
  return parseKubernetesInputs((input) => {
    const value = values[attribute(input)];
    if (input === 'pod-patch' && typeof value === 'string') return podPatchText(value);
    return Array.isArray(value) ? value.join('\n') : (value as string | undefined);
  }, flagOf);
}

/**
 * `--pod-patch`'s YAML: the file it names, or the value itself when it is YAML (it has a `:`, a `{`,
 * a `[` or several lines).
 * @throws ConfigurationError `--pod-patch: no file at …` for a value that is neither.
 */
function podPatchText(value: string): string {
  if (existsSync(value)) {
    try {
      return readFileSync(value, 'utf8');
    } catch (error) {
      throw new ConfigurationError(`--pod-patch: cannot read ${value}: ${(error as Error).message}`);
    }
  }
  if (/[:{[\n]/.test(value)) return value;
  throw new ConfigurationError(`--pod-patch: no file at ${value} (give a YAML file or the YAML itself)`);
}

/** The inputs that name a cluster and a namespace: `--kubeconfig`, `--context`, `--namespace`. */
const CLUSTER_INPUTS = ['kubeconfig', 'context', 'namespace'] as const;

/**
 * Adds `--kubeconfig`, `--context` and `--namespace` to `command` (the `cleanup` command's), as
 * `run --backend kubernetes` has them.
 */
export function addClusterOptions(command: Command): Command {
  for (const input of CLUSTER_INPUTS) {
    const flag = FLAGS[input];
    command.addOption(new Option(`${flagOf(input)} <${flag.value}>`, flag.help));
  }
  return command;
}

/**
 * Reads the flags {@link addClusterOptions} added, validated as `run` validates them.
 * @throws ConfigurationError naming the flag (`--namespace: "X" is not a valid namespace name`).
 */
export function readClusterFlags(
  command: Command,
): Pick<KubernetesInputs, 'kubeconfig' | 'context' | 'namespace'> {
  const values = command.opts<Record<string, string | undefined>>();
  const inputs = parseKubernetesInputs(
    (input) => ((CLUSTER_INPUTS as readonly string[]).includes(input) ? values[attribute(input)] : undefined),
    flagOf,
  );
  return {
    ...(inputs.kubeconfig ? { kubeconfig: inputs.kubeconfig } : {}),
    ...(inputs.context ? { context: inputs.context } : {}),
    ...(inputs.namespace ? { namespace: inputs.namespace } : {}),
  };
}

/**
 * The oldest Node the Kubernetes backend loads on: @kubernetes/client-node 2.x uses undici 8,
 * which needs Node 22.19 (`zlib.createZstdDecompress` at load). The rest of the CLI runs on Node 20.
 */
export const KUBERNETES_MIN_NODE = '22.19.0';

/** Why this Node cannot run the Kubernetes backend, or undefined when it can. */
export function kubernetesNodeProblem(version = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor = 0, needMinor = 0] = KUBERNETES_MIN_NODE.split('.').map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return (
    `--backend kubernetes: Node ${version} is running this, but the Kubernetes backend needs Node ` +
    `${KUBERNETES_MIN_NODE.replace(/\.0$/, '')} or newer (its client, @kubernetes/client-node 2.x, needs it); ` +
    'install a newer Node, or use --backend local, which runs on Node 20'
  );
}

/**
 * Loads the credentials the flags name and prepares the run. The Kubernetes client is loaded only
 * here, so the CLI starts fast and runs its local backend on a Node the client cannot load on.
 * @throws ConfigurationError naming `--kubeconfig` or `--context` when they cannot be used, or
 *   `--backend kubernetes` on a Node older than {@link KUBERNETES_MIN_NODE}.
 */
export async function kubernetesCliRun(
  inputs: KubernetesInputs,
  log: Logger,
  zones?: { zones: ZoneInputs[]; file: string },
): Promise<KubernetesCliRun> {
  const problem = kubernetesNodeProblem();
  if (problem) throw new ConfigurationError(problem);
  if (zones) {
    const { prepareZonedRun } = await import('./zones-run.ts');
    return prepareZonedRun(zones.zones, zones.file, log, {
      secretEnvInput: flagOf('secret-env'),
      podPatchInput: flagOf('pod-patch'),
    });
  }
  const { prepareKubernetesRun } = await import('./kubernetes-run.ts');
  return prepareKubernetesRun(inputs, log, {
    secretEnvInput: flagOf('secret-env'),
    podPatchInput: flagOf('pod-patch'),
  });
}

/**
 * The backend names the action input a rejected value came from (`resources: creating the runners
 * … failed (422 …)`, src/backends/kubernetes/api-errors.ts); on the command line that is the flag:
 * the same error with `--resources:` in front. Any other error is returned as it is.
 */
export function withFlagNames(error: unknown): unknown {
  if (!(error instanceof ConfigurationError) || error.constructor !== ConfigurationError) return error;
  const input = KUBERNETES_INPUTS.find((name) => error.message.startsWith(`${name}: `));
  return input ? new ConfigurationError(`--${error.message}`) : error;
}
