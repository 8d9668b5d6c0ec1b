import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local/backend.ts';
import { parseRunConfig } from '../../src/config.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { silentLogger } from '../../src/log.ts';
import { runTest } from '../../src/run/index.ts';
import { tempDir, writeScript } from '../support/cli.ts';

// Load zones' segments and tag on real k6 processes (the local backend: one place for every zone;
// the two-cluster run is test/kubernetes/zones.test.ts), against a real HTTP server on 127.0.0.1.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

const zones = [
  { name: 'eu', share: 70, runners: 3 },
  { name: 'us', share: 30, runners: 2 },
];

async function run(thresholds: Record<string, string[]>) {
  const script = writeScript(`
import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 10, iterations: 1000 } },
  thresholds: ${JSON.stringify(thresholds)},
};
export default function () { http.get(__ENV.TARGET + '/zones'); }
`);
  const before = target.arrivals.length;
  const result = await runTest(
    parseRunConfig({
      script,
      runners: 1,
      k6Args: ['-e', `TARGET=${target.url}`],
      resultPath: path.join(tempDir('k6d-zones-'), 'result.json'),
    }),
    { log: silentLogger, zones, createBackend: (k6, workDir) => new LocalBackend(k6, workDir) },
  );
  const arrived = target.arrivals.slice(before).filter((a) => a.path === '/zones').length;
  return { result, arrived };
}

describe('load zones on real k6 processes', () => {
  it('runs 70/30 over 3+2 runners: the whole test, each zone its share, a threshold per zone', async () => {
    const { result, arrived } = await run({
      'iterations{k6d_zone:eu}': ['count==700'],
      'iterations{k6d_zone:us}': ['count==300'],
    });
    // What one plain `k6 run` of this script does: 1000 iterations, one request each.
    expect(arrived).toBe(1000);
    expect(result.metrics.iterations!.values.count).toBe(1000);
    expect(result.verdict, result.failures.join('\n')).toBe('passed');
    expect(result.runners.map((r) => r.zone)).toEqual(['eu', 'eu', 'eu', 'us', 'us']);
    const [eu, us] = result.zones!;
    expect([eu!.name, eu!.requests, eu!.runners]).toEqual(['eu', 700, [0, 1, 2]]);
    expect([us!.name, us!.requests, us!.runners]).toEqual(['us', 300, [3, 4]]);
    expect(eu!.rps + us!.rps).toBeCloseTo(result.metrics.http_reqs!.values.rate!, 6);
    expect(eu!.iterations + us!.iterations).toBe(1000);
    expect(eu!.latencyMs!.max).toBeLessThanOrEqual(result.metrics.http_req_duration!.values.max!);
  });

  it("judges a zone's threshold on that zone's samples only", async () => {
    const { result } = await run({ 'iterations{k6d_zone:us}': ['count>300'] });
    expect(result.verdict).toBe('failed');
    expect(result.thresholds.find((t) => t.metric === 'iterations{k6d_zone:us}')).toMatchObject({
      ok: false,
      observed: 300,
    });
  });
});
