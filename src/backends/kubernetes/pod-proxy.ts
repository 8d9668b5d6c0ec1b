import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseBody, REST_TIMEOUT_MS, RunnerHttpError, type RunnerRequest } from '../../k6/rest.ts';
import { retrying } from './api-client.ts';
import { BARRIER_PORT, REST_PORT } from './names.ts';
import type { PodState } from './pods.ts';

/** Starts and stops through the pod proxy: a few quick retries (the start skew counts). */
const PATCH_RETRY = { retries: 3, maxRetryTimeMs: 10_000 };

/**
 * The runners' REST APIs through the API server's pod proxy
 * (`/api/v1/namespaces/NS/pods/NAME:PORT/proxy/PATH`, RBAC `pods/proxy`), on a pool of
 * connections it owns ({@link agent}), which the backend's log follows share.
 */
export class PodProxy {
  /**
   * Keeps the pod-proxy connections to the API server open between the barrier's confirmation and
   * the start (Node's default agent closes idle sockets after 5 s), so that every start `PATCH` goes
   * out on a warm TLS connection and the start skew is not a spread of handshakes.
   */
  readonly agent = new https.Agent({ keepAlive: true, timeout: 120_000, maxSockets: Infinity });
  private readonly kc: KubeConfig;
  private readonly namespace: string;
  private readonly state: (index: number) => PodState;

  /** @param state a runner's Pod state (pods.ts `RunnerPods.state`): the proxy goes to its current Pod. */
  constructor(kc: KubeConfig, namespace: string, state: (index: number) => PodState) {
    this.kc = kc;
    this.namespace = namespace;
    this.state = state;
  }

  /**
   * A {@link RunnerRequest} through the API server's pod proxy to the runner's current Pod, to its
   * k6 REST API or (`port` {@link BARRIER_PORT}) its barrier container's. A start or stop (`PATCH`),
   * or a start time, that fails in passing (5xx, a dropped connection, a timeout) is sent again: a
   * stop that never arrives would make the run kill the runner and lose its data. Status and
   * metrics polls are repeated by their callers anyway.
   * @throws Error when the runner has no running Pod.
   */
  request(index: number, port = REST_PORT): RunnerRequest {
    return async (method, path, body, timeoutMs) => {
      const state = this.state(index);
      if (state.kind !== 'running') throw new Error(`runner ${index} has no running Pod (${state.kind})`);
      const url = `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/pods/${encodeURIComponent(state.pod)}:${port}/proxy${path}`;
      const once = () => this.once(url, method, path, body, timeoutMs);
      return method === 'PATCH' || port === BARRIER_PORT ? retrying(once, PATCH_RETRY) : once();
    };
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agent.destroy();
  }

  /**
   * One request to `apiPath` on the API server, for the runner's REST API `method path`.
   * @throws Error with the HTTP status as `code` when the answer is an error status.
   */
  private async once(
    apiPath: string,
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number = REST_TIMEOUT_MS.other,
  ): Promise<unknown> {
    const cluster = this.kc.getCurrentCluster()!;
    const url = new URL(`${cluster.server.replace(/\/$/, '')}${apiPath}`);
    const options: https.RequestOptions = { method, headers: {} };
    await this.kc.applyToHTTPSOptions(options);
    // The client makes a new agent (a new TLS connection) per call; ours pools them. The TLS
    // options (ca, cert, key) stay on the request, and a proxy-url keeps the client's agent.
    if (url.protocol === 'https:' && !cluster.proxyUrl) options.agent = this.agent;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload) options.headers = { ...options.headers, 'content-type': 'application/json' };
    return new Promise((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, options, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          const status = response.statusCode ?? 500;
          if (status >= 300) {
            const error = new RunnerHttpError(method, `${path} through the pod proxy`, status, text);
            reject(Object.assign(error, { code: status }));
            return;
          }
          try {
            resolve(parseBody(method, path, text));
          } catch (error) {
            reject(error);
          }
        });
      });
      request.setTimeout(timeoutMs, () =>
        request.destroy(Object.assign(new Error(`${method} ${path}: timed out`), { code: 'ETIMEDOUT' })),
      );
      request.on('error', reject);
      request.end(payload);
    });
  }
}
