import {
  type Configuration,
  createConfiguration,
  type KubeConfig,
  type Middleware,
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

/**
 * An API client of `kc`'s current cluster (as `kc.makeApiClient`) whose every request is abandoned
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
      authMethods: { default: kc },
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
