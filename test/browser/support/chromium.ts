import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function onPath(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/**
 * Debian's `chromium`, installed with apt-get when missing (a fresh CI machine has only what the
 * project installs). Idempotent: a second call finds it on PATH. Needs root (or sudo) to install.
 * @throws Error naming the command to run when it cannot be installed.
 */
export function ensureChromium(): string {
  const existing = onPath('chromium');
  if (existing) return existing;
  const root = process.getuid?.() === 0;
  const run = (args: string[]) => {
    const [command, ...rest] = root ? args : ['sudo', '-n', ...args];
    execFileSync(command!, rest, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 600_000,
    });
  };
  try {
    // Other jobs on the machine may hold the dpkg lock: wait for it rather than fail.
    run(['apt-get', '-o', 'DPkg::Lock::Timeout=300', 'update', '-qq']);
    run(['apt-get', '-o', 'DPkg::Lock::Timeout=300', 'install', '-y', '-qq', 'chromium']);
  } catch (error) {
    throw new Error(`chromium is missing and could not be installed (apt-get install -y chromium): ${error}`);
  }
  const installed = onPath('chromium');
  if (!installed) throw new Error('chromium is still not on PATH after apt-get install -y chromium');
  return installed;
}

/** Headless Chromium on one local file: its DOM after the scripts ran, and a screenshot. */
export function openInChromium(
  chromium: string,
  file: string,
  screenshot: string,
): { dom: string; stderr: string } {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'k6d-chromium-'));
  const common = [
    '--headless',
    '--no-sandbox', // Chromium refuses to run as root with its sandbox
    '--disable-gpu',
    '--no-first-run',
    '--disable-extensions',
    `--user-data-dir=${profile}`,
    '--window-size=1280,4200',
    '--virtual-time-budget=10000',
  ];
  try {
    const dom = spawnSync(chromium, [...common, '--dump-dom', `file://${file}`], {
      encoding: 'utf8',
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (dom.status !== 0)
      throw new Error(`chromium --dump-dom exited ${dom.status}: ${dom.stderr.slice(-2000)}`);
    const shot = spawnSync(chromium, [...common, `--screenshot=${screenshot}`, `file://${file}`], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (shot.status !== 0)
      throw new Error(`chromium --screenshot exited ${shot.status}: ${shot.stderr.slice(-2000)}`);
    return { dom: dom.stdout, stderr: dom.stderr };
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}
