import { execFileSync, spawnSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePooledConnections, makeClient } from '../../src/backends/kubernetes/api-client.ts';
import { readFileCommands, runAction } from '../support/action.ts';
import { tempDir, writeScript } from '../support/cli.ts';

// Authentication as on GitHub runners, against the test cluster's API server: a kubeconfig whose
// user is an exec credential plugin (as `aws eks get-token` or `kubelogin` write), and the
// in-cluster service account of a self-hosted runner Pod (a projected, audience-bound token from
// the TokenRequest API, at the path Kubernetes mounts it, in a private mount namespace).

const kc = new KubeConfig();
let core: CoreV1Api;
let token = '';
const SA = 'k6d-auth-test';
const script = writeScript(`
export const options = { vus: 2, iterations: 4 };
export default function () {}
`);

beforeAll(async () => {
  kc.loadFromFile(process.env.KUBECONFIG!);
  core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: SA } } });
  // What examples/rbac.yaml grants, bound to this service account.
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const role = readFileSync(path.resolve(import.meta.dirname, '../../examples/rbac.yaml'), 'utf8');
  const rules = (await import('yaml'))
    .parseAllDocuments(role)
    .map((d) => d.toJS() as { kind: string; rules?: unknown[] })
    .find((d) => d.kind === 'Role')!.rules;
  await rbac.createNamespacedRole({
    namespace: 'default',
    body: { metadata: { name: SA }, rules: rules as never },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: 'default',
    body: {
      metadata: { name: SA },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SA },
      subjects: [{ kind: 'ServiceAccount', name: SA, namespace: 'default' }],
    },
  });
  const request = await core.createNamespacedServiceAccountToken({
    name: SA,
    namespace: 'default',
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  token = request.status!.token!;
});
afterAll(async () => {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.deleteNamespacedRoleBinding({ name: SA, namespace: 'default' }).catch(() => {});
  await rbac.deleteNamespacedRole({ name: SA, namespace: 'default' }).catch(() => {});
  await core.deleteNamespacedServiceAccount({ name: SA, namespace: 'default' }).catch(() => {});
});

/** A kubeconfig whose user runs `plugin` for its credentials. */
function execKubeconfig(plugin: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: k6d
  cluster:
    server: ${process.env.K6D_APISERVER}
    certificate-authority-data: ${readFileSync(process.env.K6D_CA_CERT!).toString('base64')}
users:
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${plugin}
      interactiveMode: Never
contexts:
- name: k6d-exec
  context: {cluster: k6d, user: exec, namespace: default}
current-context: k6d-exec
`;
}

/** An exec credential plugin that prints the service account's token (as `aws eks get-token` does). */
function tokenPlugin(): string {
  const plugin = path.join(tempDir('k6d-exec-'), 'get-token');
  writeFileSync(
    plugin,
    `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
  );
  chmodSync(plugin, 0o755);
  return plugin;
}

describe('authentication', () => {
  it('a kubeconfig with an exec credential plugin works', async () => {
    const plugin = tokenPlugin();
    const step = await runAction('dist/run.js', {
      script,
      runners: '2',
      kubeconfig: execKubeconfig(plugin),
      'node-selector': 'k6-distributed.test/pool=general',
      spread: 'none',
    });
    expect(step.code, step.stdout).toBe(0);
    expect(step.outputs.verdict).toBe('passed');
  });

  it('API calls share one connection per identity, and an exec plugin token still goes with each', async () => {
    const plugin = tokenPlugin();
    const viaPlugin = new KubeConfig();
    viaPlugin.loadFromString(execKubeconfig(plugin));
    let connections = 0;
    const sockets: Array<{ destroyed: boolean }> = [];
    const count = (message: unknown) => {
      connections++;
      sockets.push((message as { socket: { destroyed: boolean } }).socket);
    };
    diagnostics.subscribe('undici:client:connected', count);
    try {
      // The test's own kubeconfig (a client certificate) and the plugin's (a token), 10 calls each.
      for (const config of [kc, viaPlugin]) {
        const client = makeClient(config, CoreV1Api);
        for (let i = 0; i < 10; i++) {
          const pods = await client.listNamespacedPod({ namespace: 'default', limit: 1 });
          expect(pods.kind).toBe('PodList');
        }
      }
    } finally {
      diagnostics.unsubscribe('undici:client:connected', count);
      for (const config of [kc, viaPlugin]) closePooledConnections(config);
    }
    // One TLS connection per identity, not one per call (client-node's own dispatcher, 20).
    expect(connections).toBe(2);
    // Closing the pools ends their keep-alive connections at once (undici's own idle timeout is 4 s).
    const closedBy = Date.now() + 1000;
    while (sockets.some((s) => !s.destroyed) && Date.now() < closedBy)
      await new Promise((r) => setTimeout(r, 20));
    expect(sockets.map((s) => s.destroyed)).toEqual([true, true]);
  });

  it('when the exec plugin fails, its error is shown', async () => {
    const dir = tempDir('k6d-exec-');
    const plugin = path.join(dir, 'get-token');
    writeFileSync(
      plugin,
      '#!/bin/sh\necho "error: the SSO session has expired; run aws sso login" >&2\nexit 1\n',
    );
    chmodSync(plugin, 0o755);
    const step = await runAction('dist/run.js', { script, runners: '2', kubeconfig: execKubeconfig(plugin) });
    expect(step.code).toBe(1);
    expect(step.annotations[0]).toMatch(
      /^::error::kubeconfig: no request reached the API server https:\/\/127\.0\.0\.1:\d+: error: the SSO session has expired; run aws sso login$/,
    );
  });

  it('in a cluster, the projected service-account token is used', async () => {
    // The files Kubernetes mounts for a Pod, bound over /var/run/secrets in a private mount namespace.
    const secrets = tempDir('k6d-sa-');
    const sa = path.join(secrets, 'kubernetes.io', 'serviceaccount');
    execFileSync('mkdir', ['-p', sa]);
    writeFileSync(path.join(sa, 'token'), token);
    writeFileSync(path.join(sa, 'ca.crt'), readFileSync(process.env.K6D_CA_CERT!));
    writeFileSync(path.join(sa, 'namespace'), 'default');
    const wrapper = path.join(secrets, 'in-pod.sh');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nmkdir -p /var/run/secrets && mount --bind "${secrets}" /var/run/secrets && exec "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const api = new URL(process.env.K6D_APISERVER!);
    // dist/run.js as the Actions runner starts it (test/support/action.ts), inside the namespace.
    const workspace = tempDir('k6d-action-');
    const output = path.join(workspace, '.github-output');
    for (const f of ['.github-output', '.github-state', '.github-summary'])
      writeFileSync(path.join(workspace, f), '');
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      GITHUB_OUTPUT: output,
      GITHUB_STATE: path.join(workspace, '.github-state'),
      GITHUB_STEP_SUMMARY: path.join(workspace, '.github-summary'),
      GITHUB_WORKSPACE: workspace,
      RUNNER_TEMP: tempDir('k6d-runner-temp-'),
      KUBECONFIG: path.join(secrets, 'none'),
      HOME: secrets,
      KUBERNETES_SERVICE_HOST: api.hostname,
      KUBERNETES_SERVICE_PORT: api.port,
      INPUT_SCRIPT: script,
      INPUT_RUNNERS: '2',
      'INPUT_NODE-SELECTOR': 'k6-distributed.test/pool=general',
      INPUT_SPREAD: 'none',
    };
    const out = spawnSync(
      'unshare',
      ['--mount', '--propagation', 'private', wrapper, process.execPath, path.resolve('dist/run.js')],
      { cwd: workspace, env, encoding: 'utf8', timeout: 120_000 },
    );
    expect(out.status, out.stdout + out.stderr).toBe(0);
    expect(readFileCommands(output).verdict).toBe('passed');
  });
});
