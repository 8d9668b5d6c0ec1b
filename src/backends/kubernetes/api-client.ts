import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  type Configuration,
  createConfiguration,
  type KubeConfig,
  type Middleware,
  type RequestContext,
  type SecurityAuthentication,
  ServerConfiguration,
} from '@kubernetes/client-node';
import pRetry from 'p-retry';
import { classifyApiError } from './api-errors.ts';

/**
 * API clients that give up on a hung request and retry transient failures. The client's own calls
 * have no timeout (a request to an API server that never answers waits forever) and no retry; a
 * 5xx, a 429 or a dropped connection during a run is common on managed clusters (control-plane
 * upgrades, API priority and fairness). Retrying uses `p-retry` (exponential back-off with
 * jitter); which errors are transient is decided once, in api-errors.ts.
 */

/** How long one API request may take before it is abandoned (and retried), in ms. */
export const API_TIMEOUT_MS = 15_000;

/**
 * How a call is retried: attempts after the first, the longest total time, in ms, and the first
 * wait between attempts, in ms (default 500; it doubles, randomised up to twice as long).
 */
export interface RetryPolicy {
  retries: number;
  maxRetryTimeMs: number;
  minTimeoutMs?: number;
}

/**
 * The default policy: up to 5 retries, 0.5 s doubling to at most 4 s between attempts (about 10 s
 * of back-off in all), within 60 s.
 */
export const DEFAULT_RETRY: RetryPolicy = { retries: 5, maxRetryTimeMs: 60_000 };

/**
 * A middleware that aborts each request after `timeoutMs`, or when `signal` aborts (undici's fetch
 * honours the signal).
 */
function timeoutMiddleware(timeoutMs: number, signal?: AbortSignal): Middleware {
  return {
    pre: async (context) => {
      const timeout = AbortSignal.timeout(timeoutMs);
      context.setSignal(signal ? AbortSignal.any([timeout, signal]) : timeout);
      return context;
    },
    post: async (context) => context,
  };
}

/** Per kubeconfig: one connection pool (an undici dispatcher) per TLS identity, by its digest. */
const pools = new WeakMap<KubeConfig, Map<string, ReturnType<RequestContext['getDispatcher']>>>();

/**
 * `kc`'s authentication (its headers: a token, an exec plugin's credential) on pooled connections.
 * client-node 2.0.1 gives every request a new undici dispatcher
 * (`KubeConfig.applySecurityAuthentication`, `dist/config.js`), so every API call opened its own
 * TCP and TLS connection: 64 calls, 64 handshakes, 2.4 to 3.9 ms of this process's CPU each on the
 * test cluster, as much again in the API server, and a socket left open per call until its idle
 * timeout. Here the first dispatcher made for a TLS identity (the server, its proxy, CA, client
 * certificate and key, server name and verification as `kc.applyToHTTPSOptions` gives them, so a
 * client certificate an exec plugin renews gets a pool of its own) serves every later call with
 * that identity, keeping its connections alive between calls until {@link closePooledConnections}.
 */
function pooledAuthentication(kc: KubeConfig): SecurityAuthentication {
  return {
    getName: () => 'kubeconfig authentication on pooled connections',
    applySecurityAuthentication: async (context) => {
      await kc.applySecurityAuthentication(context);
      const fresh = context.getDispatcher();
      if (!fresh) return;
      const tls: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(tls);
      const cluster = kc.getCurrentCluster();
      const identity = createHash('sha256');
      for (const part of [
        cluster?.server,
        cluster?.proxyUrl,
        tls.ca,
        tls.cert,
        tls.key,
        tls.pfx,
        tls.passphrase,
        tls.servername,
        String(tls.rejectUnauthorized),
      ])
        identity.update(
          `${part === undefined ? '' : Buffer.isBuffer(part) ? part.toString('base64') : String(part)}\0`,
        );
      const key = identity.digest('hex');
      const byIdentity = pools.get(kc) ?? new Map();
      pools.set(kc, byIdentity);
      const pooled = byIdentity.get(key);
      if (pooled) context.setDispatcher(pooled);
      else byIdentity.set(key, fresh);
    },
  };
}

/**
 * Closes `kc`'s pooled connections ({@link pooledAuthentication}) and forgets them, so that a later
 * call opens a new pool. Idle connections close at once; a call still under way finishes first
 * (undici `Dispatcher.close`). Call it once the calls are done (the backend's cleanup), so no
 * keep-alive socket outlives the run.
 */
export function closePooledConnections(kc: KubeConfig): void {
  const byIdentity = pools.get(kc);
  pools.delete(kc);
  for (const dispatcher of byIdentity?.values() ?? []) void dispatcher?.close().catch(() => {});
}

/**
 * An API client of `kc`'s current cluster (as `kc.makeApiClient`, on pooled connections:
 * {@link pooledAuthentication}) whose every request is abandoned
 * after `timeoutMs` ms (a `TimeoutError`, transient for {@link retrying}), or when `signal` aborts
 * (e.g. a followed log at cleanup).
 * @throws Error when the kubeconfig has no current cluster (loadKubeConfig checked it before).
 */
export function makeClient<T>(
  kc: KubeConfig,
  type: new (configuration: Configuration) => T,
  timeoutMs = API_TIMEOUT_MS,
  signal?: AbortSignal,
): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig: no current cluster');
  return new type(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: pooledAuthentication(kc) },
      promiseMiddleware: [timeoutMiddleware(timeoutMs, signal)],
    }),
  );
}

/**
 * Runs `call` and retries it while it fails with a transient API error (5xx, 429, a network error
 * or a timeout: {@link classifyApiError}), with exponential back-off and jitter; any other error,
 * and the last transient one, is thrown as it is. `call` must be safe to repeat (a create that
 * succeeded before its answer was lost comes back as 409, which the caller handles).
 */
export function retrying<T>(
  call: () => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY,
  signal?: AbortSignal,
): Promise<T> {
  return pRetry(call, {
    retries: policy.retries,
    maxRetryTime: policy.maxRetryTimeMs,
    minTimeout: policy.minTimeoutMs ?? 500,
    maxTimeout: 4000,
    factor: 2,
    randomize: true,
    shouldRetry: ({ error }) => classifyApiError(error) === 'transient',
    ...(signal ? { signal } : {}),
  });
}

/** How many API requests of one kind the backend sends at once (creating and deleting Pods). */
export const API_CONCURRENCY = 16;

/** Runs `fn` over `items`, at most `limit` at a time; rejects with the first error of `fn`. */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A followed log: `inPlace` once the follow is taken, `text` once the log ended. */
export interface FollowedLog {
  /**
   * Resolves once the follow is taken: answered 200, or out for `quietMs` without an error answer
   * (the kubelet sends no headers before the container writes a line, and k6 runs with `--quiet`).
   * Rejects when every attempt was refused.
   */
  inPlace: Promise<void>;
  /** The whole log, once the container ended; rejects after `timeoutMs`, on `signal` or a broken stream. */
  text: Promise<string>;
}

/**
 * Follows a container's log (`GET /api/v1/namespaces/NS/pods/NAME/log?container=C&follow=true`),
 * opening the follow with `policy`'s retries (a 503 while the kubelet is busy is common).
 * `inPlace` tells when the follow is taken, so that a caller can end the container right then and
 * still read everything it writes last (the follow reads the log from its start). Plain `https` with the kubeconfig's credentials
 * (`applyToHTTPSOptions`), as the pod proxy requests: client-node's `Log` pipes the response
 * without an error handler, so a stream that breaks would be an uncaught exception.
 * @param options.timeoutMs the longest the whole follow may take, in ms.
 * @param options.agent the connection pool to use (ignored with a kubeconfig `proxy-url`).
 * @param options.onData sees each chunk as it arrives (the whole log is still `text` at the end).
 */
export function followPodLog(
  kc: KubeConfig,
  pod: { namespace: string; name: string; container: string },
  options: {
    timeoutMs: number;
    quietMs: number;
    policy: RetryPolicy;
    signal?: AbortSignal;
    agent?: https.Agent;
    /** Called with each chunk of the log as it arrives. */
    onData?: (chunk: string) => void;
  },
): FollowedLog {
  let taken!: () => void;
  const inPlace = new Promise<void>((resolve) => {
    taken = resolve;
  });
  const cluster = kc.getCurrentCluster();
  const signal = AbortSignal.any([
    AbortSignal.timeout(options.timeoutMs),
    ...(options.signal ? [options.signal] : []),
  ]);
  const url = new URL(
    `${cluster?.server.replace(/\/$/, '') ?? ''}/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}/log`,
  );
  url.searchParams.set('container', pod.container);
  url.searchParams.set('follow', 'true');
  const open = async (): Promise<http.IncomingMessage> => {
    const request: https.RequestOptions = { method: 'GET', headers: {}, signal };
    await kc.applyToHTTPSOptions(request);
    if (url.protocol === 'https:' && options.agent && !cluster?.proxyUrl) request.agent = options.agent;
    return new Promise((resolve, reject) => {
      const quiet = setTimeout(taken, options.quietMs);
      const req = (url.protocol === 'https:' ? https : http).request(url, request, (response) => {
        clearTimeout(quiet);
        if (response.statusCode === 200) {
          resolve(response);
          return;
        }
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('error', reject);
        response.on('end', () =>
          reject(
            Object.assign(new Error(`following the log of Pod ${pod.name}: HTTP ${response.statusCode}`), {
              code: response.statusCode,
              body,
            }),
          ),
        );
      });
      req.on('error', (error) => {
        clearTimeout(quiet);
        reject(error);
      });
      req.end();
    });
  };
  let established!: Promise<void>;
  const text = new Promise<string>((resolve, reject) => {
    established = retrying(open, options.policy, signal).then((response) => {
      taken();
      let log = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        log += chunk;
        options.onData?.(chunk);
      });
      response.on('end', () => resolve(log));
      response.on('error', reject);
      response.on('close', () => {
        if (!response.complete) reject(new Error(`following the log of Pod ${pod.name}: the stream broke`));
      });
    });
    established.catch(reject);
  });
  const taking = Promise.race([inPlace, established]);
  // Handled here too: a caller that only reads `text` must not leave a rejection unhandled.
  text.catch(() => {});
  taking.catch(() => {});
  return { inPlace: taking, text };
}

/**
 * Follows one container's log of a runner Pod of the run ({@link followPodLog} with the run's
 * namespace, connection pool and abort signal bound), so that the parts that follow logs take it
 * as an argument and unit tests give a fake one.
 */
export type LogFollower = (
  pod: { name: string; container: string },
  options: { timeoutMs: number; quietMs: number; policy: RetryPolicy; onData?: (chunk: string) => void },
) => FollowedLog;
