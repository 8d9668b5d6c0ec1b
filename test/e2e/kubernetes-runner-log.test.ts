import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractSummary } from '../../src/backends/kubernetes/log-summary.ts';
import { tempDir } from '../support/temp.ts';

// A runner Pod's log as k6 itself writes it: it needs real k6, so it is not in the unit project
// (the rest of extractSummary is in test/unit/backends/kubernetes/log-summary.test.ts).
describe('runner log', () => {
  it('reads what k6 itself writes with --summary-export /dev/stdout into a pipe, with its logs on stderr', () => {
    const dir = tempDir('k6d-stdout-');
    const script = path.join(dir, 's.js');
    writeFileSync(
      script,
      "export const options = { vus: 1, iterations: 3 };\nexport default function () { console.log('a log line'); }\n",
    );
    const out = spawnSync(
      'sh',
      [
        '-c',
        '"$K6" run --quiet --no-color --no-usage-report --summary-export /dev/stdout "$1" 2>&1 | cat',
        'sh',
        script,
      ],
      { env: { ...process.env, K6: process.env.K6_BINARY! }, encoding: 'utf8' },
    );
    const { summary, rest } = extractSummary(out.stdout);
    expect(JSON.parse(summary!).metrics.iterations.count).toBe(3);
    expect(rest).toContain('a log line');
  });
});
