import { AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ConfigurationError, errorMessage } from '../../errors.ts';
import { makeClient, retrying } from './api-client.ts';
import { apiError, apiStatus } from './api-errors.ts';

/** One permission the run needs in its namespace. */
export interface Permission {
  /** API group, '' for the core group. */
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
}

/**
 * What a run needs, and nothing more (examples/rbac.yaml grants exactly this):
 * ConfigMaps for the archive, Jobs for the runners, Pods to watch them, pods/log to read the
 * summaries, pods/proxy to reach the k6 REST API (GET status and metrics, PATCH to start and stop, POST to
 * run setup() and teardown() once, PUT to hand setup()'s data to every runner: the API server
 * authorises proxy requests with the HTTP method's verb, POST as create and PUT as update).
 */
export const REQUIRED_PERMISSIONS: readonly Permission[] = [
  ...['create', 'get', 'list', 'delete'].map((verb) => ({ group: '', resource: 'configmaps', verb })),
  ...['create', 'get', 'list', 'watch', 'delete'].map((verb) => ({ group: 'batch', resource: 'jobs', verb })),
  ...['get', 'list', 'watch', 'delete'].map((verb) => ({ group: '', resource: 'pods', verb })),
  { group: '', resource: 'pods', subresource: 'log', verb: 'get' },
  { group: '', resource: 'pods', subresource: 'proxy', verb: 'get' },
  { group: '', resource: 'pods', subresource: 'proxy', verb: 'patch' },
  { group: '', resource: 'pods', subresource: 'proxy', verb: 'create' },
  { group: '', resource: 'pods', subresource: 'proxy', verb: 'update' },
];

function describe(p: Permission): string {
  const resource = `${p.resource}${p.subresource ? `/${p.subresource}` : ''}`;
  return `${p.verb} ${p.group ? `${resource}.${p.group}` : resource}`;
}

/**
 * Asks the API server, with SelfSubjectAccessReviews, whether the credentials hold every
 * permission in `namespace`, before anything is created.
 * @throws ConfigurationError listing every missing verb and resource in one message; or, when no
 *   request reaches the API server (an exec credential plugin that fails, a server that does not
 *   answer), naming the server and the reason (for a plugin: what it wrote to stderr);
 *   the error of {@link apiError} when the API server answers with an error status.
 */
export async function checkPermissions(
  kc: KubeConfig,
  namespace: string,
  needed: readonly Permission[] = REQUIRED_PERMISSIONS,
): Promise<void> {
  const api = makeClient(kc, AuthorizationV1Api);
  const answers = await Promise.all(
    needed.map(async (p) => {
      const review = await retrying(
        () =>
          api.createSelfSubjectAccessReview({
            body: {
              apiVersion: 'authorization.k8s.io/v1',
              kind: 'SelfSubjectAccessReview',
              spec: {
                resourceAttributes: {
                  namespace,
                  group: p.group,
                  resource: p.resource,
                  verb: p.verb,
                  ...(p.subresource ? { subresource: p.subresource } : {}),
                },
              },
            },
          }),
        // Few retries: a server that cannot be reached at all is more often a wrong kubeconfig.
        { retries: 2, maxRetryTimeMs: 10_000 },
      ).catch((error: unknown) => {
        // An ApiException carries the HTTP status: the server answered.
        if (apiStatus(error) !== undefined)
          throw apiError(error, `checking the permissions in namespace ${namespace}`);
        // Nothing reached the server: the kubeconfig's server or its credential plugin is wrong.
        const reason = errorMessage(error).trim().split('\n')[0] || 'no reason given';
        throw new ConfigurationError(
          `kubeconfig: no request reached the API server ${kc.getCurrentCluster()?.server}: ${reason}`,
        );
      });
      return { p, allowed: review.status?.allowed === true };
    }),
  );
  const missing = answers.filter((a) => !a.allowed).map((a) => describe(a.p));
  if (missing.length > 0) {
    throw new ConfigurationError(
      `permissions: the credentials lack in namespace ${namespace}: ${missing.join(', ')} (examples/rbac.yaml grants what is needed)`,
    );
  }
}
