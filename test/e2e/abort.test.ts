import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { runCli, tempDir } from '../support/cli.ts';

// abortOnFail judged on the whole test while it runs (src/run/abort.ts): real k6 runners through
// the CLI against a real HTTP server on 127.0.0.1. The slice-only and the global rate cases are in
// the equivalence table (test/equivalence/cases.ts); these cover what `/v1/metrics` lacks.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

const script = (threshold: string) => `
import http from 'k6/http';
export const options = {
  scenarios: { c: { executor: 'constant-vus', vus: 4, duration: '8s' } },
  thresholds: { http_req_duration: [{ threshold: '${threshold}', abortOnFail: true }] },
};
export default function () { http.get(__ENV.TARGET + '/slow?ms=150'); }
`;

async function run(threshold: string, runners: number) {
  const dir = tempDir('k6d-abort-');
  const file = path.join(dir, 'script.js');
  writeFileSync(file, script(threshold));
  return runCli(['run', file, '-n', String(runners), '--', '-e', `TARGET=${target.url}`], { cwd: dir });
}

describe('abortOnFail on the whole test', () => {
  it('stops every runner when a percentile /v1/metrics lacks (p(99)) is crossed on every runner, exit 99', async () => {
    const r = await run('p(99)<100', 2);
    expect(r.code, r.stderr).toBe(99);
    expect(r.result!.durationS).toBeLessThan(6);
    expect(r.result!.failures.join('\n')).toMatch(
      /threshold http_req_duration p\(99\)<100 with abortOnFail crossed on the whole test \(p\(99\) crossed on every runner\)/,
    );
    // The runners' data is kept and judged: the p(99) of every request is over 150 ms.
    expect(r.result!.metrics.http_req_duration!.values['p(99)']).toBeGreaterThan(100);
    expect(r.result!.thresholds[0]).toMatchObject({ ok: false, abortOnFail: true });
  });

  it('runs to the end when the threshold is never crossed', async () => {
    const r = await run('p(95)<5000', 2);
    expect(r.code, r.stderr).toBe(0);
    expect(r.result!.durationS).toBeGreaterThan(7.5);
  });
});
