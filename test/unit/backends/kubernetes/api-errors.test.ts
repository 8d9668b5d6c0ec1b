import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { apiError, classifyApiError } from '../../../../src/backends/kubernetes/api-errors.ts';
import { ConfigurationError, exitCodeFor, RunError } from '../../../../src/errors.ts';

/** An error as the Kubernetes client throws it for an HTTP status, with a `Status` body. */
function apiException(code: number, message: string): ApiException<string> {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code });
  return new ApiException(code, `HTTP-Code: ${code}\nMessage: Unknown API Status Code!`, body, {});
}

/** A network failure as fetch reports it: no HTTP status. */
function networkError(): Error {
  return Object.assign(new Error('request to https://127.0.0.1:6443 failed, reason: connect ECONNREFUSED'), {
    code: 'ECONNREFUSED',
  });
}

const INVALID_QUANTITY =
  'Job.batch "k6d-abc-0" is invalid: spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "lots": quantities must match the regular expression';

describe('Kubernetes API errors', () => {
  it.each([
    [400, 'configuration'],
    [401, 'configuration'],
    [403, 'configuration'],
    [404, 'configuration'],
    [409, 'other'],
    [422, 'configuration'],
    [429, 'transient'],
    [500, 'transient'],
    [503, 'transient'],
    [504, 'transient'],
    [418, 'other'],
  ])('classifies HTTP %i as %s', (status, cls) => {
    expect(classifyApiError(apiException(status, 'x'))).toBe(cls);
  });

  it('classifies a network error as transient', () => {
    expect(classifyApiError(networkError())).toBe('transient');
  });

  it.each([
    ['resources', INVALID_QUANTITY],
    [
      'node-selector',
      'Job.batch "k6d-abc-0" is invalid: spec.template.spec.nodeSelector: Invalid value: "-x"',
    ],
    [
      'tolerations',
      'Job.batch "k6d-abc-0" is invalid: spec.template.spec.tolerations[0].operator: Unsupported value',
    ],
    [
      'runner-image',
      'Job.batch "k6d-abc-0" is invalid: spec.template.spec.containers[0].image: Required value',
    ],
    [
      'secret-env',
      'Job.batch "k6d-abc-0" is invalid: spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name: Invalid value',
    ],
    ['pod-patch', 'Pod "k6d-abc-0" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "data"'],
    ['pod-patch', 'Pod "k6d-abc-0" is invalid: spec.initContainers[0].image: Required value'],
  ])('names the input %s when Kubernetes rejects a field made from it (422, exit 2)', (input, message) => {
    const error = apiError(apiException(422, message), 'creating the runners in namespace load');
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toBe(
      `${input}: creating the runners in namespace load failed (422: an input is not valid for Kubernetes): ${message}`,
    );
    expect(exitCodeFor([error.kind])).toBe(2);
  });

  it('calls a 403 a configuration error in one line with the API server’s reason', () => {
    const reason =
      'jobs.batch is forbidden: User "ci" cannot create resource "jobs" in API group "batch" in the namespace "load"';
    const error = apiError(apiException(403, reason), 'creating the runners in namespace load');
    expect(error.kind).toBe('configuration');
    expect(error.message).toBe(
      `creating the runners in namespace load failed (403: the kubeconfig's identity is not allowed to do this): ${reason}`,
    );
  });

  it('calls outages start failures (exit 1) that say a retry may help', () => {
    const outage = apiError(
      apiException(503, 'etcdserver: leader changed'),
      'creating the runners in namespace load',
    );
    expect(outage).toBeInstanceOf(RunError);
    expect(outage).not.toBeInstanceOf(ConfigurationError);
    expect(outage.kind).toBe('start');
    expect(outage.message).toBe(
      'creating the runners in namespace load failed (503: the API server is unavailable; retry later): etcdserver: leader changed',
    );
    const network = apiError(networkError(), 'creating the runners in namespace load');
    expect(network.kind).toBe('start');
    expect(network.message).toMatch(
      /\(network: the API server could not be reached; retry later\): request to/,
    );
  });
});
