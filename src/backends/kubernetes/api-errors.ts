import isNetworkError from 'is-network-error';
import { ConfigurationError, errorMessage, RunError } from '../../errors.ts';

/**
 * Kubernetes API errors, classified once. The client (`@kubernetes/client-node` v1) throws an
 * `ApiException` with the HTTP status in `code` and the API's `Status` object as JSON text in
 * `body`; a network failure throws an error without a numeric `code`.
 * Status meanings: https://kubernetes.io/docs/reference/using-api/api-concepts/#http-status-codes
 */

/** What an API error means for the user: their input, a passing outage, or anything else. */
export type ApiErrorClass = 'configuration' | 'transient' | 'other';

/** One row of {@link API_ERRORS}. */
export interface ApiErrorRule {
  class: ApiErrorClass;
  /** What the status means, as a phrase for the message. */
  meaning: string;
}

/** HTTP status -> what it means for a run. Statuses not listed are `other`. */
export const API_ERRORS: Readonly<Record<number, ApiErrorRule>> = {
  400: { class: 'configuration', meaning: 'the API server refused a manifest built from the inputs' },
  401: { class: 'configuration', meaning: "the kubeconfig's credentials were not accepted" },
  403: { class: 'configuration', meaning: "the kubeconfig's identity is not allowed to do this" },
  404: { class: 'configuration', meaning: 'the namespace does not exist' },
  409: { class: 'other', meaning: 'an object of the same name exists' },
  422: { class: 'configuration', meaning: 'an input is not valid for Kubernetes' },
  429: { class: 'transient', meaning: 'the API server is rate limiting; retry later' },
  500: { class: 'transient', meaning: 'the API server failed; retry later' },
  502: { class: 'transient', meaning: 'the API server is unreachable through its proxy; retry later' },
  503: { class: 'transient', meaning: 'the API server is unavailable; retry later' },
  504: { class: 'transient', meaning: 'the API server timed out; retry later' },
};

/**
 * The action input a rejected manifest field comes from, by the field's name in the API's
 * message (e.g. `spec.template.spec.containers[0].resources.requests`); the first match wins.
 */
export const FIELD_INPUTS: ReadonlyArray<[field: RegExp, input: string]> = [
  // Fields only the `pod-patch` input sets.
  [/\b(initContainers|envFrom|volumeMounts|volumes|hostAliases)\b/, 'pod-patch'],
  [/\bsecretKeyRef\b/, 'secret-env'],
  [/\bresources\b/, 'resources'],
  [/\bnodeSelector\b/, 'node-selector'],
  [/\btolerations\b/, 'tolerations'],
  [/\b(topologySpreadConstraints|affinity)\b/, 'spread'],
  [/\bsysctls\b/, 'sysctls'],
  [/\bimage\b/, 'runner-image'],
  [/\blabels\b/, 'labels'],
  [/\benv\b/, 'env'],
];

/**
 * The HTTP status of an API error; `undefined` for a network error or a timeout (a `DOMException`
 * has a numeric `code` too, which is not an HTTP status).
 */
export function apiStatus(error: unknown): number | undefined {
  if (error instanceof DOMException) return undefined;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 100 && code < 600 ? code : undefined;
}

/** Whether `error` is a request abandoned after its timeout (`AbortSignal.timeout`). */
export function isTimeout(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'TimeoutError';
}

/** The API's own message (`Status.message` of the body) when there is one, else the error's first line. */
export function apiErrorMessage(error: unknown): string {
  const body = (error as { body?: unknown } | null)?.body;
  if (typeof body === 'string') {
    try {
      const status = JSON.parse(body) as { message?: string };
      if (status.message) return status.message;
    } catch {
      // not JSON
    }
  }
  return errorMessage(error).split('\n')[0]!;
}

/** Node's error codes of a connection that failed or broke (`err.code`, also on fetch's `cause`). */
const NETWORK_CODES =
  /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|UND_ERR_\w+)$/;

/**
 * Whether `error` is a connection that failed, broke or timed out: fetch's network `TypeError`
 * (`is-network-error`), a timeout, or a Node socket error code on the error or its `cause`.
 */
export function isNetworkFailure(error: unknown): boolean {
  if (isNetworkError(error) || isTimeout(error)) return true;
  const codes = [error, (error as { cause?: unknown } | null)?.cause].map(
    (e) => (e as { code?: unknown } | null)?.code,
  );
  return codes.some((code) => typeof code === 'string' && NETWORK_CODES.test(code));
}

/**
 * The class of an API error: by status from {@link API_ERRORS}; a network failure or a timeout is
 * transient; anything else without a status (e.g. the client refusing a kubeconfig) is `other`.
 */
export function classifyApiError(error: unknown): ApiErrorClass {
  const status = apiStatus(error);
  if (status === undefined) return isNetworkFailure(error) ? 'transient' : 'other';
  return API_ERRORS[status]?.class ?? 'other';
}

/**
 * The error to throw for an API error met while `doing` something (e.g. `creating the runners in
 * namespace load`): a ConfigurationError that names the input the rejected field comes from
 * (`resources: … Invalid value: "lots" …`) for 400/401/403/404/422; a RunError `start` otherwise,
 * saying whether retrying may help.
 */
export function apiError(error: unknown, doing: string): RunError {
  const status = apiStatus(error);
  const message = apiErrorMessage(error);
  const what =
    status === undefined
      ? isTimeout(error)
        ? 'timeout: the API server did not answer in time; retry later'
        : isNetworkFailure(error)
          ? 'network: the API server could not be reached; retry later'
          : 'the request could not be sent'
      : `${status}${API_ERRORS[status] ? `: ${API_ERRORS[status].meaning}` : ''}`;
  const line = `${doing} failed (${what}): ${message}`;
  if (classifyApiError(error) !== 'configuration') return new RunError('start', line);
  // Only a rejected manifest (400, 422) names a field; a 403's message names resources, not inputs.
  const input =
    status === 404
      ? 'namespace'
      : status === 400 || status === 422
        ? FIELD_INPUTS.find(([field]) => field.test(message))?.[1]
        : undefined;
  return new ConfigurationError(input ? `${input}: ${line}` : line);
}
