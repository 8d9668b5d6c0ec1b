import { AuthorizationV1Api, type KubeConfig, type V1ResourceRule } from '@kubernetes/client-node';
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
 * ConfigMaps for the archive, Pods for the runners (created, watched and deleted), pods/log to
 * read the summaries, pods/proxy to reach the k6 REST API (GET status and metrics, PATCH to start and stop, POST to
 * run setup() and teardown() once, PUT to hand setup()'s data to every runner and the start instant
 * to every runner's barrier container: the API server
 * authorises proxy requests with the HTTP method's verb, POST as create and PUT as update).
 */
export const REQUIRED_PERMISSIONS: readonly Permission[] = [
  ...['create', 'get', 'list', 'delete'].map((verb) => ({ group: '', resource: 'configmaps', verb })),
  ...['create', 'get', 'list', 'watch', 'delete'].map((verb) => ({ group: '', resource: 'pods', verb })),
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
 * Whether one rule of a SelfSubjectRulesReview (`status.resourceRules[]`) grants `p` on every
 * object, matched as the RBAC authorizer matches a PolicyRule (k8s.io/kubernetes
 * `pkg/apis/rbac/v1/evaluation_helpers.go`: `VerbMatches`, `APIGroupMatches`, `ResourceMatches`):
 * `*` matches anything; a subresource (`pods/log`) is matched by its full name or by `*` and
 * `/log` (any resource's log), never by `pods` alone; a rule limited to `resourceNames` does
 * not cover every object.
 */
export function ruleGrants(rule: V1ResourceRule, p: Permission): boolean {
  if (rule.resourceNames && rule.resourceNames.length > 0) return false;
  const has = (list: readonly string[] | undefined, value: string) =>
    (list ?? []).some((x) => x === '*' || x === value);
  const resource = p.subresource ? `${p.resource}/${p.subresource}` : p.resource;
  const resources = (rule.resources ?? []).some(
    (r) => r === '*' || r === resource || (p.subresource !== undefined && r === `*/${p.subresource}`),
  );
  return has(rule.verbs, p.verb) && has(rule.apiGroups, p.group) && resources;
}

/**
 * Asks the API server whether the credentials hold every permission in `namespace`, before
 * anything is created: one SelfSubjectRulesReview first (the rules the credentials hold there), then
 * a SelfSubjectAccessReview for each permission those rules do not grant. The rules review may
 * leave out what a webhook authorizer allows (it says `incomplete`), so it only ever grants; the
 * access reviews decide the rest.
 * @throws ConfigurationError listing every missing verb and resource in one message; or, when no
 *   request reaches the API server (an exec credential plugin that fails, a server that does not
 *   answer), naming the server and the reason (for a plugin: what it wrote to stderr);
 *   the error of {@link apiError} when the API server answers an access review with an error status.
 */
export async function checkPermissions(
  kc: KubeConfig,
  namespace: string,
  needed: readonly Permission[] = REQUIRED_PERMISSIONS,
): Promise<void> {
  const api = makeClient(kc, AuthorizationV1Api);
  const unreachable = (error: unknown) => {
    // Nothing reached the server: the kubeconfig's server or its credential plugin is wrong.
    const reason = errorMessage(error).trim().split('\n')[0] || 'no reason given';
    return new ConfigurationError(
      `kubeconfig: no request reached the API server ${kc.getCurrentCluster()?.server}: ${reason}`,
    );
  };
  // Few retries: a server that cannot be reached at all is more often a wrong kubeconfig.
  const policy = { retries: 2, maxRetryTimeMs: 10_000 };
  const rules = await retrying(
    () =>
      api.createSelfSubjectRulesReview({
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } },
      }),
    policy,
  ).then(
    (review) => review.status?.resourceRules ?? [],
    (error: unknown) => {
      // The server answered (an old or locked-down one): the access reviews decide everything.
      if (apiStatus(error) !== undefined) return [];
      throw unreachable(error);
    },
  );
  const answers = await Promise.all(
    needed.map(async (p) => {
      if (rules.some((rule) => ruleGrants(rule, p))) return { p, allowed: true };
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
        policy,
      ).catch((error: unknown) => {
        // An ApiException carries the HTTP status: the server answered.
        if (apiStatus(error) !== undefined)
          throw apiError(error, `checking the permissions in namespace ${namespace}`);
        throw unreachable(error);
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
