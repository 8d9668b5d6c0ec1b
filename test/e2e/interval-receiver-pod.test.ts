import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiverScript } from '../../src/backends/kubernetes/receiver/script.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { decodeIntervalLines } from '../../src/result/interval-lines.ts';
import { k6Binary } from '../equivalence/harness.ts';
import { tempDir } from '../support/cli.ts';

// The runner Pod's interval receiver (receiver/main.ts, bundled as the ConfigMap ships it) beside a
// real k6 on this machine, as in the Pod: k6 pushes to it on 127.0.0.1 with native histograms and
// lingers, as the runners do. Both ends of a runner are checked: k6 ended with SIGTERM while the
// receiver runs on (it must print by itself once k6 is gone), and both SIGTERMed at once (a Pod's
// deletion: it must wait for k6's last push). Its samples must be every one of k6's.

let target: RecordingTarget;
let program: string;
beforeAll(async () => {
  target = await startNodeTarget('127.0.0.1');
  program = path.join(tempDir('k6d-iv-'), 'interval-receiver.cjs');
  writeFileSync(program, await receiverScript());
});
afterAll(async () => {
  await target?.stop();
});

/** A free port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function output(child: ChildProcess): { text: () => string; exited: Promise<number | null> } {
  let text = '';
  child.stdout?.on('data', (c: Buffer) => {
    text += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    text += c.toString();
  });
  return { text: () => text, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

/** The receiver on `port`, watching k6's REST API on `rest`; resolves once it listens. */
async function startReceiver(port: number, rest: number) {
  const receiver = spawn(process.execPath, [program], {
    env: {
      K6D_IV_PORT: String(port),
      K6D_IV_RUNNER_PORT: String(rest),
      K6D_IV_METRICS: '[]',
      K6D_IV_PUSH_MS: '100',
    },
  });
  const got = output(receiver);
  for (let i = 0; i < 100 && !got.text().includes('k6d-iv-listening'); i++)
    await new Promise((r) => setTimeout(r, 50));
  return { receiver, got };
}

/** k6 on `script`, lingering, its REST API on `rest`, pushing to `port`. */
function startK6(script: string, port: number, rest: number, summary: string) {
  const k6 = spawn(
    k6Binary(),
    [
      'run',
      '--quiet',
      '--linger',
      '--address',
      `127.0.0.1:${rest}`,
      '--summary-export',
      summary,
      '--out',
      'experimental-prometheus-rw',
      script,
    ],
    {
      env: {
        ...process.env,
        K6_PROMETHEUS_RW_SERVER_URL: `http://127.0.0.1:${port}/0`,
        K6_PROMETHEUS_RW_PUSH_INTERVAL: '100ms',
        K6_FEATURES: 'native-histograms',
        K6_PROMETHEUS_RW_STALE_MARKERS: 'false',
        K6_NO_USAGE_REPORT: 'true',
      },
    },
  );
  return { k6, exited: output(k6).exited };
}

describe("the runner Pod's interval receiver beside real k6", () => {
  it("says it was late when it began listening after its runner's test had started", async () => {
    const [port, rest] = [await freePort(), await freePort()];
    const dir = tempDir('k6d-iv-late-');
    const script = path.join(dir, 'script.js');
    writeFileSync(
      script,
      `import http from 'k6/http';
export const options = { vus: 1, duration: '2s' };
export default function () { http.get('${target.url}/steady'); }`,
    );
    const { k6, exited } = startK6(script, port, rest, path.join(dir, 'summary.json'));
    await new Promise((r) => setTimeout(r, 1_500));
    const { receiver, got } = await startReceiver(port, rest);
    await new Promise((r) => setTimeout(r, 1_500));
    k6.kill('SIGTERM');
    receiver.kill('SIGTERM');
    await exited;
    expect(await got.exited).toBe(0);
    expect(decodeIntervalLines(got.text()).end).toMatchObject({ late: true });
  }, 30_000);

  for (const both of [false, true]) {
    it(both
      ? 'SIGTERMed with k6 at once (a Pod deleted): it waits for k6 to go, and has every sample'
      : 'k6 SIGTERMed after its linger: it prints by itself once k6 is gone, and has every sample', async () => {
      const [port, rest] = [await freePort(), await freePort()];
      const dir = tempDir('k6d-iv-run-');
      const script = path.join(dir, 'script.js');
      writeFileSync(
        script,
        `import http from 'k6/http';
export const options = { vus: 2, duration: '2s' };
export default function () { http.get('${target.url}/steady'); }`,
      );
      // In the Pod, k6 stays paused until every runner is ready (the barrier waits for the
      // receiver); here it starts at once, so only once the receiver listens.
      const { receiver, got } = await startReceiver(port, rest);
      const summary = path.join(dir, 'summary.json');
      const { k6, exited } = startK6(script, port, rest, summary);
      // The test ends after 2 s; the linger keeps k6 (and its REST API) up until SIGTERM.
      await new Promise((r) => setTimeout(r, 3_500));
      expect(got.text()).not.toMatch(/k6d-iv-end/);
      k6.kill('SIGTERM');
      if (both) receiver.kill('SIGTERM');
      await exited;
      expect(await got.exited).toBe(0);
      const { deltas, end } = decodeIntervalLines(got.text());
      expect(end).toEqual({ pushes: expect.any(Number), refused: 0 });
      const k6Count = JSON.parse(readFileSync(summary, 'utf8')).metrics.http_reqs.count as number;
      expect(deltas.reduce((a, d) => a + d.h.count, 0)).toBe(k6Count);
    }, 30_000);
  }
});
