import type { KubeConfig } from '@kubernetes/client-node';
import { KubernetesBackend } from '../../backends/kubernetes/backend.ts';
import { defaultNamespace, kubeconfigSecrets, loadKubeConfig } from '../../backends/kubernetes/kubeconfig.ts';
import { LocalBackend } from '../../backends/local/backend.ts';
import { checkDistinctZones, ZonedBackend, zoneLogger } from '../../backends/zones.ts';
import { ConfigurationError } from '../../errors.ts';
import { kubernetesBackendOptions } from '../../inputs/kubernetes.ts';
import type { ZoneInputs } from '../../inputs/zones.ts';
import type { Logger } from '../../log.ts';
import type { RunActionInputs } from './inputs.ts';
import { type BackendFactory, type CreateBackend, type RunActionDeps, STATE } from './outcome.ts';

/** Which backend each run of the step gets, and what the post step needs to find its runners. */

/** The real backends: LocalBackend, and KubernetesBackend on the cluster the inputs name. */
export const backends: BackendFactory = {
  local: (env) => (k6, workDir) => new LocalBackend(k6, workDir, { env }),
  kubernetes: (inputs, runId, log) => {
    if (inputs.zones) return zonedBackend(inputs.zones, runId, log);
    const kc = kubeConfigOf(inputs);
    const namespace = inputs.namespace ?? defaultNamespace(kc);
    return {
      namespace,
      create: () => new KubernetesBackend(kubernetesBackendOptions(inputs, { kc, namespace, runId, log })),
    };
  },
};

/**
 * Every zone's credentials and namespace (`zones` input), checked before anything is created.
 * @throws ConfigurationError naming the zone: credentials that cannot be loaded, an unknown
 *   context, two zones on the same cluster and namespace.
 */
export function zoneClusters(
  zones: readonly ZoneInputs[],
): Array<{ zone: ZoneInputs; kc: KubeConfig; namespace: string }> {
  const loaded = zones.map((zone) => {
    const label = `zones: zone "${zone.name}"`;
    const kc = loadKubeConfig({
      ...(zone.kubernetes.kubeconfig ? { kubeconfig: zone.kubernetes.kubeconfig } : {}),
      ...(zone.kubernetes.context ? { context: zone.kubernetes.context } : {}),
      names: { kubeconfig: `${label}: kubeconfig`, context: `${label}: context` },
    });
    return { zone, kc, namespace: zone.kubernetes.namespace ?? defaultNamespace(kc) };
  });
  checkDistinctZones(
    loaded.map((z) => ({
      name: z.zone.name,
      server: z.kc.getCurrentCluster()?.server,
      namespace: z.namespace,
    })),
    'zones',
  );
  return loaded;
}

/** The backend of a run with load zones: one KubernetesBackend per zone, one run id. */
function zonedBackend(zones: readonly ZoneInputs[], runId: string, log: Logger) {
  const loaded = zoneClusters(zones);
  return {
    namespace: loaded[0]!.namespace,
    create: () =>
      new ZonedBackend(
        loaded.map(({ zone, kc, namespace }) => ({
          name: zone.name,
          backend: new KubernetesBackend(
            kubernetesBackendOptions(zone.kubernetes, {
              kc,
              namespace,
              runId,
              log: zoneLogger(log, zone.name),
            }),
          ),
        })),
        log,
      ),
  };
}

/**
 * What to mask of the kubeconfig input in the log: the whole input when it is one line (base64,
 * or JSON on one line), and each credential inside it ({@link kubeconfigSecrets}: block or flow
 * YAML, JSON). GitHub masks line by line, so a multi-line value is never registered whole.
 */
export function kubeconfigMasks(kubeconfig: string | undefined): string[] {
  if (!kubeconfig) return [];
  const trimmed = kubeconfig.trim();
  return [...(trimmed.includes('\n') ? [] : [trimmed]), ...kubeconfigSecrets(kubeconfig)];
}

/** The cluster credentials the inputs name (see loadKubeConfig for the order of sources). */
export function kubeConfigOf(inputs: Pick<RunActionInputs, 'kubeconfig' | 'context'>): KubeConfig {
  return loadKubeConfig({
    ...(inputs.kubeconfig ? { kubeconfig: inputs.kubeconfig } : {}),
    ...(inputs.context ? { context: inputs.context } : {}),
  });
}

/**
 * The inputs without a default that shape runner Pods or reach the cluster only: with
 * `backend: local` each one given is named in one warning.
 */
const POD_ONLY_INPUTS = [
  'node-selector',
  'tolerations',
  'resources',
  'labels',
  'sysctls',
  'namespace',
  'kubeconfig',
  'context',
] as const;

/**
 * The runners' environment with `backend: local`: the `env` values, and each `secret-env`
 * variable from this step's environment (a Kubernetes Secret cannot be read here; a workflow gives
 * the secret as `env:` of the step, which GitHub masks in the log).
 * @throws ConfigurationError naming `secret-env` when a variable is not in the step's environment.
 */
export function localRunnerEnv(inputs: RunActionInputs, environment = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of inputs.env) {
    if ('value' in e) {
      env[e.name] = e.value;
      continue;
    }
    const value = environment[e.name];
    if (value === undefined) {
      throw new ConfigurationError(
        `secret-env: ${e.name} names the Kubernetes Secret ${e.secret}/${e.key}, which backend local cannot read; give the step "env: ${e.name}: \${{ secrets.… }}" instead`,
      );
    }
    env[e.name] = value;
  }
  return env;
}

/**
 * The backend of one run of the step. With `backend: local`, the first run warns once of the
 * Pod-only inputs given. With `backend: kubernetes`, every run id of the step so far (several
 * scripts, maybe at once), the namespace and the cleanup policy are saved for the post step
 * before the run starts, so that it removes them all after a cancelled or crashed step.
 * @param runIds the step's run ids so far; this run's is added.
 * @throws ConfigurationError for a `secret-env` variable missing with backend local, or
 *   credentials that cannot be loaded.
 */
export function backendFor(
  inputs: RunActionInputs,
  runId: string,
  runIds: string[],
  log: Logger,
  deps: Pick<RunActionDeps, 'backends' | 'given' | 'saveState' | 'environment' | 'log'>,
): CreateBackend {
  if (inputs.backend === 'local') {
    const ignored = POD_ONLY_INPUTS.filter((name) => deps.given(name));
    if (ignored.length > 0 && runIds.length === 0) {
      deps.log.warning(
        `${ignored.join(', ')}: ${ignored.length === 1 ? 'applies' : 'apply'} to Kubernetes runner Pods only; ignored with backend local`,
      );
    }
    runIds.push(runId);
    return deps.backends.local(localRunnerEnv(inputs, deps.environment));
  }
  const { namespace, create } = deps.backends.kubernetes(inputs, runId, log);
  runIds.push(runId);
  deps.saveState(STATE.runId, runIds.join(','));
  deps.saveState(STATE.namespace, namespace);
  deps.saveState(STATE.cleanup, inputs.cleanup);
  return create;
}
