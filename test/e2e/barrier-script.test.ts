import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BarrierLog } from '../../src/backends/kubernetes/barrier/log.ts';
import {
  barrierRunArgs,
  barrierScript,
  VUS_PERIOD_MS,
} from '../../src/backends/kubernetes/barrier/script.ts';
import { K6_STATUS } from '../../src/k6/rest.ts';
import { k6Binary } from '../equivalence/harness.ts';
import { tempDir } from '../support/cli.ts';
import { waitFor } from '../support/wait.ts';

// The Kubernetes runner Pod's barrier container, run here as it runs there: real k6 running the
// barrier script beside a real paused k6 runner, talking over loopback. Its log is what the
// Kubernetes backend follows (ready, the VU count, the end); the cluster suite runs it in Pods.

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A paused, lingering k6 runner of `script` with its REST API on `port`, and the barrier script
 * beside it, with its own REST API (its start-time mailbox) on `mailboxPort`.
 */
function runnerAndBarrier(script: string, port: number, mailboxPort: number) {
  const dir = tempDir('k6d-barrier-');
  writeFileSync(path.join(dir, 'script.js'), script);
  writeFileSync(path.join(dir, 'barrier.js'), barrierScript(port, mailboxPort));
  const runner = spawn(
    k6Binary(),
    [
      'run',
      '--paused',
      '--linger',
      '--quiet',
      '--no-usage-report',
      '--address',
      `127.0.0.1:${port}`,
      'script.js',
    ],
    { cwd: dir, stdio: 'ignore' },
  );
  // The container's command (manifests.ts).
  const barrier = spawn(k6Binary(), [...barrierRunArgs(`127.0.0.1:${mailboxPort}`), 'barrier.js'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(runner, barrier);
  let stdout = '';
  const log = new BarrierLog();
  barrier.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    log.feed(chunk);
  });
  const barrierExit = new Promise<number | null>((resolve) => barrier.on('exit', (code) => resolve(code)));
  return { runner, log, barrierExit, stdout: () => stdout };
}

async function patchStatus(port: number, attributes: Record<string, unknown>): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/status`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'status', id: 'default', attributes } }),
  });
  expect(response.status).toBe(200);
}

describe("the runner Pod's barrier container (real k6 beside a real runner)", () => {
  it('prints ready at status 4, the VU count as it ramps, and the end; then exits 0', async () => {
    const port = await freePort();
    const { runner, log, barrierExit, stdout } = runnerAndBarrier(
      `import { sleep } from 'k6';
export const options = { scenarios: { ramp: { executor: 'ramping-vus', startVUs: 1, stages: [
  { duration: '2s', target: 4 }, { duration: '1s', target: 4 } ], gracefulRampDown: '0s' } } };
export default function () { sleep(0.05); }
`,
      port,
      await freePort(),
    );
    await waitFor(() => log.readyAtMs !== undefined, 'the ready line', { timeoutMs: 30_000 });
    // Paused at status 4: no VU sample yet, and no end.
    await new Promise((r) => setTimeout(r, 600));
    expect(log.end).toBeUndefined();
    expect(stdout()).not.toContain('k6d-vus');
    const startedAt = Date.now();
    await patchStatus(port, { paused: false });
    await waitFor(() => log.end !== undefined, 'the end line', { timeoutMs: 30_000 });
    expect(log.end!.status).toBe(K6_STATUS.Ended);
    expect(await barrierExit).toBe(0);
    const record = log.vusRecord()!;
    expect(record.periodMs).toBe(VUS_PERIOD_MS);
    const vus = record.changes.map((c) => c.vus);
    // The ramp from 1 to 4 VUs, seen as it happened, each sample a change (the VUs winding down
    // as the test ends may show last).
    const ramp = vus.slice(0, vus.indexOf(4) + 1);
    expect(ramp[0]).toBeLessThanOrEqual(2);
    expect(ramp.at(-1)).toBe(4);
    expect(ramp).toEqual([...ramp].sort((a, b) => a - b));
    expect(vus.every((v, i) => i === 0 || v !== vus[i - 1])).toBe(true);
    const periods = record.changes.map((c) => Math.floor(c.atMs / VUS_PERIOD_MS));
    expect(new Set(periods).size).toBe(periods.length);
    expect(record.changes[0]!.atMs).toBeGreaterThanOrEqual(startedAt - 50);
    expect(record.endedAtMs - startedAt).toBeGreaterThan(2900);
    // Its linger goes on until a signal, as on Kubernetes.
    expect(runner.exitCode).toBeNull();
    runner.kill('SIGTERM');
  }, 60_000);

  it('starts its runner itself at the instant set in its mailbox, prints when, and sees the end soon after', async () => {
    const port = await freePort();
    const mailboxPort = await freePort();
    const { log, barrierExit } = runnerAndBarrier(
      `import { sleep } from 'k6';
export const options = { vus: 1, duration: '1s' };
export default function () { sleep(0.05); }
`,
      port,
      mailboxPort,
    );
    await waitFor(() => log.readyAtMs !== undefined, 'the ready line', { timeoutMs: 30_000 });
    // The orchestrator's request through the pod proxy, here on loopback: k6's PUT /v1/setup.
    // The test (1 s) can end 1 s after the start: from 100 ms before, the barrier looks every 50 ms.
    // On a half second, so that the end (its last 50 ms iteration after that) falls just after a
    // period's poll: without the closer look it would be seen at the next one, 500 ms on.
    const startAt = Math.ceil((Date.now() + 1500) / 500) * 500;
    const put = await fetch(`http://127.0.0.1:${mailboxPort}/v1/setup`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ startAt, endsFrom: startAt + 900 }),
    });
    expect(put.status).toBe(200);
    // Still paused well before the instant.
    await new Promise((r) => setTimeout(r, 1000));
    const before = (await (await fetch(`http://127.0.0.1:${port}/v1/status`)).json()) as {
      data: { attributes: { status: number } };
    };
    expect(before.data.attributes.status).toBe(K6_STATUS.PausedBeforeRun);
    await waitFor(() => log.started !== undefined, 'the started line', { timeoutMs: 10_000 });
    const { sentAtMs, atMs } = log.started!;
    // Un-paused at the instant: not before, and within a few ms of it (2 cores, other tests running).
    expect(sentAtMs).toBeGreaterThanOrEqual(startAt);
    expect(sentAtMs - startAt).toBeLessThan(100);
    expect(atMs).toBeGreaterThanOrEqual(sentAtMs);
    await waitFor(() => log.end !== undefined, 'the end line', { timeoutMs: 30_000 });
    expect(log.end!.status).toBe(K6_STATUS.Ended);
    expect(log.end!.atMs - sentAtMs).toBeGreaterThan(900);
    // Seen within a few polls of the end (1 s and the last 50 ms iteration), not at the next
    // half-second period (up to 1.55 s).
    expect(log.end!.atMs - sentAtMs).toBeLessThan(1300);
    expect(await barrierExit).toBe(0);
  }, 60_000);

  it('prints the end with status 10 when the runner is stopped through its REST API', async () => {
    const port = await freePort();
    const { log, barrierExit } = runnerAndBarrier(
      `import { sleep } from 'k6';
export const options = { vus: 2, duration: '60s' };
export default function () { sleep(0.05); }
`,
      port,
      await freePort(),
    );
    await waitFor(() => log.readyAtMs !== undefined, 'the ready line', { timeoutMs: 30_000 });
    await patchStatus(port, { paused: false });
    await new Promise((r) => setTimeout(r, 1200));
    await patchStatus(port, { stopped: true });
    await waitFor(() => log.end !== undefined, 'the end line', { timeoutMs: 30_000 });
    expect(log.end!.status).toBe(K6_STATUS.Interrupted);
    expect(await barrierExit).toBe(0);
    expect(log.vusRecord()!.changes.map((c) => c.vus)).toEqual([2]);
  }, 60_000);

  it('fails (not 0) when its runner goes away before the start, and never says ready', async () => {
    const port = await freePort();
    const { runner, log, barrierExit } = runnerAndBarrier(
      `import { sleep } from 'k6';
if (__VU > 0) sleep(30);
export default function () {}
`,
      port,
      await freePort(),
    );
    // The runner's API answers while its VU initialises for 30 s; then it dies. (A barrier that never
    // saw the API waits on: its Pod's k6 container ending is what the backend sees then.)
    for (let i = 0; ; i++) {
      const answer = await fetch(`http://127.0.0.1:${port}/v1/status`).catch(() => undefined);
      if (answer?.ok) break;
      if (i > 300) throw new Error("the runner's REST API never answered");
      await new Promise((r) => setTimeout(r, 100));
    }
    // The barrier (a k6 of its own, slower to start) has seen the runner's API by then.
    await new Promise((r) => setTimeout(r, 3000));
    runner.kill('SIGKILL');
    const code = await barrierExit;
    expect(code).not.toBe(0);
    expect(log.readyAtMs).toBeUndefined();
    expect(log.end).toBeUndefined();
  }, 60_000);
});
