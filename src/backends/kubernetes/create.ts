import type { CoreV1Api } from '@kubernetes/client-node';
import { ConfigurationError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { API_CONCURRENCY, eachLimited, retrying } from './api-client.ts';
import { apiStatus } from './api-errors.ts';
import { archiveConfigMap, MAX_ARCHIVE_BYTES, type RunSpec, runnerPod } from './manifests.ts';
import { runName } from './names.ts';
import { loosenedDefaults } from './pod-patch.ts';

/**
 * Creates an object, retrying transient API errors. When a retried create finds the object there
 * (409: an earlier attempt got through but its answer was lost), `read` gives it.
 */
export async function createOrRead<T>(create: () => Promise<T>, read: () => Promise<T>): Promise<T> {
  let attempts = 0;
  return retrying(async () => {
    attempts++;
    try {
      return await create();
    } catch (error) {
      if (attempts > 1 && apiStatus(error) === 409) return read();
      throw error;
    }
  });
}

/**
 * Checks that the k6 archive fits in a ConfigMap ({@link MAX_ARCHIVE_BYTES}).
 * @throws ConfigurationError giving its size in MiB and what to do instead.
 */
export function checkArchiveSize(archive: Buffer): void {
  if (archive.length > MAX_ARCHIVE_BYTES) {
    throw new ConfigurationError(
      `script: its k6 archive is ${(archive.length / 1048576).toFixed(2)} MiB, more than a ConfigMap holds (1 MiB); ` +
        'move large data files out of the script (load them from a URL in setup()), or build a runner image that contains them',
    );
  }
}

/**
 * The warning for the user's `-e NAME=value` values (`plan.env`) on Kubernetes, naming the variables
 * and never their values: each runner Pod carries them in its `env` (manifests.ts `runnerPod`), so
 * whoever can read the Pods reads them, and etcd stores them; a Secret (`secret-env`,
 * `valueFrom.secretKeyRef`) keeps them out of the Pod objects. Undefined without `-e` values.
 */
export function plainEnvWarning(
  spec: Pick<RunSpec, 'plan' | 'namespace' | 'secretEnvInput'>,
): string | undefined {
  const names = Object.keys(spec.plan.env ?? {});
  if (names.length === 0) return undefined;
  return (
    `-e ${names.join(', ')}: their values are in every runner Pod's environment in namespace ${spec.namespace} ` +
    '(readable by whoever can read its Pods, and stored in etcd); ' +
    `give secrets with ${spec.secretEnvInput ?? 'secret-env'} NAME=secret/key instead`
  );
}

/**
 * The warning for a `pod-patch` that loosens the runner Pods' hardened defaults (pod-patch.ts
 * `loosenedDefaults`), naming each field; undefined without a patch or when it loosens none. Builds
 * runner 0's Pod, so a patch that changes a field k6-distributed owns fails here, before anything is
 * created.
 * @throws ConfigurationError naming the `pod-patch` input and the field.
 */
export function podPatchWarning(spec: RunSpec): string | undefined {
  const runner = spec.plan.runners[0];
  if (!spec.podPatch || !runner) return undefined;
  const loosened = loosenedDefaults(runnerPod(spec, runner, { name: runName(spec.runId), uid: '' }));
  if (loosened.length === 0) return undefined;
  return `${spec.podPatchInput ?? 'pod-patch'} loosens the runner Pods' hardened defaults: ${loosened.join(', ')}`;
}

/**
 * Creates the run's objects (manifests.ts): the ConfigMap with the archive first, then one Pod per
 * runner, owned by it, {@link API_CONCURRENCY} at a time. Each create is retried while the API
 * server fails transiently ({@link createOrRead}). The user's `-e` values and a `pod-patch` that
 * loosens the hardened defaults are warned about first ({@link plainEnvWarning},
 * {@link podPatchWarning}).
 * @throws ConfigurationError naming `pod-patch` when it changes a field k6-distributed owns, before
 *   anything is created.
 * @throws the API error of the first create that failed for good (the caller names what it did).
 */
export async function createRun(
  api: Pick<CoreV1Api, 'createNamespacedConfigMap' | 'readNamespacedConfigMap' | 'createNamespacedPod'>,
  spec: RunSpec,
  archive: Buffer,
  log?: Pick<Logger, 'warning'>,
): Promise<void> {
  const { namespace, runId } = spec;
  for (const warning of [plainEnvWarning(spec), podPatchWarning(spec)]) if (warning) log?.warning(warning);
  const configMap = await createOrRead(
    () => api.createNamespacedConfigMap({ namespace, body: archiveConfigMap(spec, archive) }),
    () => api.readNamespacedConfigMap({ namespace, name: runName(runId) }),
  );
  const owner = { name: runName(runId), uid: configMap.metadata!.uid! };
  await eachLimited(spec.plan.runners, API_CONCURRENCY, async (runner) => {
    await createOrRead(
      () => api.createNamespacedPod({ namespace, body: runnerPod(spec, runner, owner) }),
      async () => undefined,
    );
  });
}
