/**
 * Helpers of bench/cluster.ts: the API server's request counts and the HTTP target in a process of
 * its own.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import https from 'node:https';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Sum of `apiserver_request_total`, overall and by resource[/subresource]. */
export async function requestCounts(
  kc: KubeConfig,
): Promise<{ total: number; byResource: Record<string, number> }> {
  const options: https.RequestOptions = { method: 'GET' };
  await kc.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    https
      .get(`${kc.getCurrentCluster()!.server}/metrics`, options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
  let total = 0;
  const byResource: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    const sub = /subresource="([^"]*)"/.exec(line)?.[1] ?? '';
    const key = sub ? `${resource}/${sub}` : resource || '(none)';
    total += value;
    byResource[key] = (byResource[key] ?? 0) + value;
  }
  return { total, byResource };
}

export function diff(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) out[k] = (b[k] ?? 0) - (a[k] ?? 0);
  return out;
}

/**
 * The HTTP target (src/demo/target.ts) in a process of its own, on the pod bridge's gateway. In
 * this process, its request handling (about 20 req/s per runner once they start) shared the event
 * loop that timestamps the start confirmations, and inflated the skew measured at 64 runners.
 */
export async function startTargetProcess(
  host: string,
): Promise<{ url: string; stop(): void; firstArrivals(): Promise<Record<string, number>> }> {
  // A line on its stdin asks for the first arrival (epoch ms) of each runner (its x-runner header)
  // since the last ask, as one JSON line on its stdout.
  const code = `const { startNodeTarget } = await import(${JSON.stringify(path.join(ROOT, 'src/demo/target.ts'))});
const t = await startNodeTarget(process.env.TARGET_HOST);
console.log(t.url);
process.stdin.setEncoding('utf8').on('data', () => {
  const first = {};
  for (const a of t.arrivals) if (a.runner !== undefined && !(a.runner in first)) first[a.runner] = a.at;
  t.arrivals.length = 0;
  console.log(JSON.stringify(first));
});`;
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, TARGET_HOST: host },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let waiting: (() => void) | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const parts = out.split('\n');
      out = parts.pop()!;
      lines.push(...parts);
      if (lines.length > 0 && !lines[0]!.startsWith('{')) resolve(lines.shift()!.trim());
      waiting?.();
    });
    child.on('exit', (code) => reject(new Error(`the target exited (${code})`)));
  });
  const firstArrivals = async () => {
    child.stdin!.write('first\n');
    while (lines.length === 0) await new Promise<void>((r) => (waiting = r));
    return JSON.parse(lines.shift()!) as Record<string, number>;
  };
  return { url, stop: () => child.kill(), firstArrivals };
}
