#!/usr/bin/env node
// The npm package's command (`npx k6-distributed`). For `run` and `demo` without `--k6` or
// $K6_BINARY it first finds a k6, or builds the pinned one once: scripts/ensure-k6.sh, with the
// tools/k6 module the package carries (k6 on PATH when it is v1.x or v2.x, else
// ~/.cache/k6-distributed/k6-<version>/k6, built with Go when missing). Then it runs the CLI,
// dist/cli.js, built for Node 20 (scripts/build.mjs); on an older Node it says so in one line and
// loads nothing.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MIN_NODE = 20; // package.json `engines`
if (Number(process.versions.node.split('.')[0]) < MIN_NODE) {
  console.error(
    `k6-distributed: Node ${process.versions.node} is running this, but it needs Node ${MIN_NODE} or newer ` +
      '(22.19 or newer for --backend kubernetes); install a newer Node.',
  );
  process.exit(1);
}

const args = process.argv.slice(2);
const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
const needsK6 =
  (own[0] === 'run' || own[0] === 'demo') &&
  !process.env.K6_BINARY &&
  !own.some((a) => a === '--k6' || a.startsWith('--k6=')) &&
  !own.some((a) => a === '-h' || a === '--help');

if (needsK6) {
  try {
    const out = execFileSync('bash', [fileURLToPath(new URL('./ensure-k6.sh', import.meta.url))], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    process.env.K6_BINARY = out.trim().split('\n').at(-1);
  } catch {
    // ensure-k6.sh said why on stderr (no k6 and no Go to build it); the run cannot start.
    process.exit(1);
  }
}
await import('../dist/cli.js');
