import { execFileSync } from 'node:child_process';

/**
 * Finds (or builds) the k6 binary once for every test file and hands it over as K6_BINARY,
 * the same way the CLI resolves it (scripts/ensure-k6.sh).
 */
export default function setup(): void {
  if (!process.env.K6_BINARY) {
    const out = execFileSync('bash', ['scripts/ensure-k6.sh'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    process.env.K6_BINARY = out.trim().split('\n').at(-1);
  }
}
