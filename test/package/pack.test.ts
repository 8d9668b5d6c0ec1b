import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeTarget, type Target } from '../../src/demo/target.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { ROOT, tempDir } from '../support/cli.ts';

// The npm package as a user gets it: `npm pack`, the tarball installed into an empty folder (the
// package's own files from the tarball, anything else from the npm cache or registry), and
// `npx k6-distributed` run there, finding the pinned k6 as it would on first use.

const node = path.dirname(process.execPath); // Node 24, first on PATH: npm and the bin run on it
const work = tempDir('k6d-package-');
const project = path.join(work, 'project');
let tarball: string;
let files: string[];
let target: Target;

/** The environment of a user's shell: no K6_BINARY from the test setup, no k6 on PATH. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { K6_BINARY: _, ...env } = process.env;
  const PATH = [
    node,
    ...(env.PATH ?? '').split(path.delimiter).filter((d) => !existsSync(path.join(d, 'k6'))),
  ];
  return { ...env, PATH: PATH.join(path.delimiter), K6D_DEMO_TARGET: 'node', ...extra };
}

/** Runs `npx k6-distributed …` in the project, without blocking (the target serves from this process). */
function npx(
  args: string[],
  env = userEnv(),
  timeout = 110_000,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn('npx', ['--no', 'k6-distributed', ...args], { cwd: project, env, timeout });
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

beforeAll(async () => {
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: ROOT,
      env: userEnv(),
      encoding: 'utf8',
    }),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = path.join(work, packed[0]!.filename);
  files = packed[0]!.files.map((f) => f.path);
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(path.join(project, 'package.json'), '{ "private": true }\n');
  execFileSync('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: project,
    env: userEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  target = await startNodeTarget();
}, 240_000);

afterAll(async () => {
  await target?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('carries the CLI, what finds or builds the pinned k6, and the examples, and no dev-only files', () => {
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
      /^(src|test|bench|docs|workflows|\.github|actions)\/|^action\.yml$|^dist\/(main|run|run-post|report)\.js$|\.ts$/.test(
        f,
      ),
    );
    expect(devOnly).toEqual([]);
    const manifest = JSON.parse(
      readFileSync(path.join(project, 'node_modules/k6-distributed/package.json'), 'utf8'),
    );
    expect(manifest.private).toBeUndefined();
    expect(manifest.engines.node).toBe('>=24');
    // Everything the CLI runs is bundled in dist/: installing it pulls no runtime dependency.
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('npx k6-distributed demo: 2 runners against the bundled target, passed', async () => {
    const out = await npx(['demo', '--runners', '2', '--duration', '3s', '--rate', '100']);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('✅ passed');
    expect(out.stdout).toContain('2 runners (local)');
    const result = JSON.parse(
      readFileSync(path.join(project, 'k6-distributed-result.json'), 'utf8'),
    ) as RunResult;
    expect(result.runners.map((r) => r.segment)).toEqual(['0:1/2', '1/2:1']);
  });

  it('npx k6-distributed run: a script of the user against a local target', async () => {
    writeFileSync(
      path.join(project, 'load.js'),
      [
        "import http from 'k6/http';",
        "export const options = { vus: 4, iterations: 200, thresholds: { http_reqs: ['count==200'] } };",
        "export default function () { http.get(__ENV.BASE_URL + '/api/items'); }",
        '',
      ].join('\n'),
    );
    const out = await npx([
      'run',
      'load.js',
      '--runners',
      '2',
      '--out',
      'out.json',
      '--',
      '-e',
      `BASE_URL=${target.url}`,
    ]);
    expect(out.status, out.stderr).toBe(0);
    const result = JSON.parse(readFileSync(path.join(project, 'out.json'), 'utf8')) as RunResult;
    expect(result.verdict).toBe('passed');
    expect(result.metrics.http_reqs!.values.count).toBe(200);
    expect(result.environment.k6Version).toBe('v2.2.0');
  });

  // The module in tools/k6 the package carries builds the pinned k6 into an empty cache: seconds
  // when Go's caches are warm (the tests' setup builds the same module), minutes on a cold machine.
  it('builds the pinned k6 on first use when there is none, and runs with it', async () => {
    const cache = path.join(work, 'first-use-cache');
    const env = userEnv({ K6D_CACHE_DIR: cache });
    const go = execFileSync('bash', ['-c', 'command -v go'], { encoding: 'utf8' }).trim();
    env.PATH = [node, path.dirname(go), '/usr/bin', '/bin'].join(path.delimiter); // Go, no k6
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
    const env = userEnv({ K6D_CACHE_DIR: path.join(work, 'empty-cache') });
    env.PATH = [node, '/usr/bin', '/bin'].join(path.delimiter); // no Go, no k6
    const out = await npx(['run', 'load.js'], env);
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('k6 is not installed and there is no Go toolchain to build k6 v2.2.0');
  });
});
