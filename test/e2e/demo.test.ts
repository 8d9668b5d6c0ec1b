import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/schema.ts';
import { ROOT, tempDir } from '../support/cli.ts';

describe('the README demo, through the committed bundle dist/cli.js', () => {
  it('runs examples/quickstart.js with 4 runners against a local target and passes', () => {
    const cwd = tempDir('k6d-demo-');
    // The bundled Node target keeps this test quick; `npm run demo` prefers nginx.
    const out = spawnSync(
      process.execPath,
      [path.join(ROOT, 'dist/cli.js'), 'demo', '--duration', '3s', '--rate', '200'],
      {
        cwd,
        env: { ...process.env, K6D_DEMO_TARGET: 'node' },
        encoding: 'utf8',
        timeout: 110_000,
      },
    );
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('✓ passed');
    expect(out.stdout).toContain('4 runners (local)');
    const result = JSON.parse(
      readFileSync(path.join(cwd, 'k6-distributed-result.json'), 'utf8'),
    ) as RunResult;
    expect(result.runners.map((r) => r.segment)).toEqual(['0:1/4', '1/4:2/4', '2/4:3/4', '3/4:1']);
    // 200 requests per second for 3 s, split over 4 runners.
    expect(result.metrics.http_reqs!.values.count).toBeGreaterThanOrEqual(595);
    expect(result.metrics.http_reqs!.values.count).toBeLessThanOrEqual(601);
  });
});
