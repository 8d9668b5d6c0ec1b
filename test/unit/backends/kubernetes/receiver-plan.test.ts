import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { receiverPlan, serverMinor } from '../../../../src/backends/kubernetes/receiver/plan.ts';
import { planRun } from '../../../../src/run/plan.ts';
import { recordingLogger } from '../../run/support/fakes.ts';

/** A KubeConfig for an API server on 127.0.0.1 that answers `GET /version` with `minor` (a real HTTP server). */
async function apiServer(minor: string) {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/version' ? { major: '1', minor, gitVersion: `v1.${minor}.0` } : {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
  return { kc, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("the interval receiver's plan", () => {
  it('reads the minor version as API servers give it, and none when it cannot', async () => {
    const api = (answer: object | Error) => ({
      getCode: async () => {
        if (answer instanceof Error) throw answer;
        return answer as never;
      },
    });
    expect(await serverMinor(api({ major: '1', minor: '35' }))).toBe(35);
    expect(await serverMinor(api({ major: '1', minor: '29+' }))).toBe(29);
    expect(await serverMinor(api({ major: '', minor: '' }))).toBeUndefined();
    expect(await serverMinor(api(new Error('403')))).toBeUndefined();
  });

  it('keeps the pushes and gives the program on 1.29 and later; leaves both out before, with a warning', async () => {
    const plan = {
      ...planRun({ runners: 1, maxVUs: 1 }),
      intervalMetrics: { url: 'http://127.0.0.1', pushIntervalMs: 100 },
    };
    for (const [minor, on] of [
      ['29', true],
      ['28', false],
    ] as const) {
      const { kc, close } = await apiServer(minor);
      const log = recordingLogger();
      try {
        const got = await receiverPlan(plan, { kc, receiverImage: 'node:24-slim', log });
        expect(got.plan.intervalMetrics !== undefined).toBe(on);
        expect(got.receiverScript !== undefined).toBe(on);
        if (on) expect(got.receiverScript).toContain('k6d-iv-end');
        else
          expect(log.lines).toEqual([
            expect.stringMatching(/Kubernetes 1\.28, .*native sidecar \(1\.29 or later\)/),
          ]);
      } finally {
        await close();
      }
    }
    // Off: no request at all.
    const off = await receiverPlan(plan, { kc: new KubeConfig(), log: recordingLogger() });
    expect(off).toEqual({ plan: { ...plan, intervalMetrics: undefined } });
  });
});
