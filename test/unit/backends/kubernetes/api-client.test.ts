import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { makeClient, retrying } from '../../../../src/backends/kubernetes/api-client.ts';
import { apiError, apiStatus, classifyApiError } from '../../../../src/backends/kubernetes/api-errors.ts';

// The client against a real HTTP server on 127.0.0.1 that answers as a failing API server would.

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server answering the n-th request with `answers[n]` (a status, or `hang` for no answer). */
async function apiServer(answers: Array<number | 'hang'>): Promise<{ kc: KubeConfig; count: () => number }> {
  let n = 0;
  server = http.createServer((req, res) => {
    const answer = answers[Math.min(n++, answers.length - 1)]!;
    req.resume();
    if (answer === 'hang') return;
    res.writeHead(answer, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        answer < 300
          ? { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] }
          : {
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              message: `failing with ${answer}`,
              code: answer,
            },
      ),
    );
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { kc, count: () => n };
}

describe('API calls that fail in passing', () => {
  it('retries 503 and 429 until the API server answers', async () => {
    const { kc, count } = await apiServer([503, 429, 200]);
    const core = makeClient(kc, CoreV1Api);
    const list = await retrying(() => core.listNamespacedPod({ namespace: 'default' }));
    expect(list.items).toEqual([]);
    expect(count()).toBe(3);
  });

  it('does not retry what retrying cannot mend (403)', async () => {
    const { kc, count } = await apiServer([403, 200]);
    const core = makeClient(kc, CoreV1Api);
    const error = await retrying(() => core.listNamespacedPod({ namespace: 'default' })).catch((e) => e);
    expect(apiStatus(error)).toBe(403);
    expect(count()).toBe(1);
  });

  it('gives up on a request the API server never answers, and retries it', async () => {
    const { kc, count } = await apiServer(['hang', 200]);
    const core = makeClient(kc, CoreV1Api, 300);
    const list = await retrying(() => core.listNamespacedPod({ namespace: 'default' }));
    expect(list.items).toEqual([]);
    expect(count()).toBe(2);
  });

  it('names a timeout that persists as a timeout, not as an HTTP status', async () => {
    const { kc } = await apiServer(['hang']);
    const core = makeClient(kc, CoreV1Api, 200);
    const error = await retrying(() => core.listNamespacedPod({ namespace: 'default' }), {
      retries: 1,
      maxRetryTimeMs: 5000,
    }).catch((e) => e);
    expect(apiStatus(error)).toBeUndefined();
    expect(classifyApiError(error)).toBe('transient');
    expect(apiError(error, 'listing the Pods').message).toMatch(
      /^listing the Pods failed \(timeout: the API server did not answer in time; retry later\)/,
    );
  });
});
