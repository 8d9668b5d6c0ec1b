import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { load as parseYaml } from 'js-yaml';
import { ConfigurationError, errorMessage } from '../../errors.ts';

/** Where the credentials come from. */
export interface KubeconfigSource {
  /** A kubeconfig as raw YAML or base64 of it (the action's `kubeconfig` input). */
  kubeconfig?: string;
  /** A context to use instead of the kubeconfig's current one. */
  context?: string;
  /**
   * How the caller's user names the two inputs in errors: `kubeconfig` and `context` in an action
   * (the default), `--kubeconfig` and `--context` on the CLI.
   */
  names?: { kubeconfig: string; context: string };
}

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Turns the `kubeconfig` input into YAML: it is either YAML/JSON or base64 of it. */
export function decodeKubeconfig(text: string): string {
  const trimmed = text.trim();
  if (
    /^(apiVersion|kind|clusters|contexts|users|current-context|preferences)\s*:/m.test(trimmed) ||
    trimmed.startsWith('{')
  ) {
    return trimmed;
  }
  const decoded = Buffer.from(trimmed, 'base64').toString('utf8');
  if (
    /^(apiVersion|clusters|contexts|users|current-context)\s*:/m.test(decoded) ||
    decoded.trim().startsWith('{')
  ) {
    return decoded;
  }
  throw new ConfigurationError('kubeconfig: is neither kubeconfig YAML nor base64 of it');
}

/** kubeconfig keys whose values are credentials (users[].user, auth-provider config, exec env). */
const SECRET_KEYS = new Set([
  'token',
  'client-key-data',
  'client-certificate-data',
  'password',
  'id-token',
  'refresh-token',
  'client-secret',
  'access-token',
]);

/**
 * Every credential of a kubeconfig given as the input is (block or flow YAML, JSON, or base64 of
 * any), for masking in the log: the values of {@link SECRET_KEYS} at any depth, and the `value` of
 * exec plugin `env` entries. Text that does not parse gives its single lines of 20+ characters
 * that look like keys or tokens, so nothing that might be one is shown.
 */
export function kubeconfigSecrets(text: string): string[] {
  const out = new Set<string>();
  let doc: unknown;
  try {
    doc = parseYaml(decodeKubeconfig(text));
  } catch {
    for (const word of text.split(/[\s"',{}:]+/)) if (/^[A-Za-z0-9+/=._-]{20,}$/.test(word)) out.add(word);
    return [...out];
  }
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string' && value !== '' && SECRET_KEYS.has(key)) out.add(value);
      else if (key === 'env' && Array.isArray(value)) {
        for (const e of value) if (typeof e?.value === 'string' && e.value !== '') out.add(e.value);
      } else stack.push(value);
    }
  }
  return [...out];
}

/**
 * Loads cluster credentials explicitly, never through `loadFromDefault()`, which falls back to
 * http://localhost:8080 without a word when nothing is configured. Order: the `kubeconfig` input;
 * else `$KUBECONFIG` (first file) or `~/.kube/config` (what cloud login steps such as
 * aws-actions/configure-aws-credentials + `aws eks update-kubeconfig`, azure/aks-set-context and
 * google-github-actions/get-gke-credentials write); else the in-cluster service account of a
 * self-hosted runner Pod. Exec credential plugins in the kubeconfig are run by the client.
 * @throws ConfigurationError when no source exists, the kubeconfig does not parse, the context is
 *   unknown, or the current context names no cluster.
 */
export function loadKubeConfig(source: KubeconfigSource, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const names = source.names ?? { kubeconfig: 'kubeconfig', context: 'context' };
  const kc = new KubeConfig();
  let from: string;
  try {
    if (source.kubeconfig) {
      kc.loadFromString(decodeKubeconfig(source.kubeconfig));
      from = 'the kubeconfig input';
    } else {
      const file =
        env.KUBECONFIG?.split(path.delimiter).find(Boolean) ?? path.join(os.homedir(), '.kube', 'config');
      if (existsSync(file)) {
        kc.loadFromFile(file);
        from = file;
      } else if (env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN)) {
        kc.loadFromCluster();
        from = 'the in-cluster service account';
      } else {
        throw new ConfigurationError(
          `${names.kubeconfig}: none given, no file at ${file} and not running in a cluster; give ${names.kubeconfig} or log in to the cluster first (e.g. in an earlier step)`,
        );
      }
    }
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(
      `${names.kubeconfig}: cannot be read: ${errorMessage(error).split('\n')[0]}`,
    );
  }
  if (source.context) {
    if (!kc.getContextObject(source.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new ConfigurationError(
        `${names.context}: "${source.context}" is not in ${from} (it has: ${known.join(', ') || 'none'})`,
      );
    }
    kc.setCurrentContext(source.context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new ConfigurationError(
      `${names.kubeconfig}: the current context of ${from} names no cluster with a server`,
    );
  }
  return kc;
}

/** The namespace of the current context, else of the in-cluster service account, else `default`. */
export function defaultNamespace(kc: KubeConfig): string {
  const context = kc.getContextObject(kc.getCurrentContext());
  if (context?.namespace) return context.namespace;
  const file = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  return 'default';
}
