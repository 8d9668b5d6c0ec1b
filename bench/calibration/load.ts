import { spawn } from 'node:child_process';

/**
 * A noisy neighbour for the calibration (issue 24: "run it while something else loads the
 * machine too"): one child process that burns CPU in bursts of 5–50 ms (uniform) and rests between
 * them, so that it keeps `share` of one core busy on average, at random moments.
 * @param share fraction of one core, 0–1 (0: none is started).
 * @returns a function that stops it.
 */
export function startBackgroundLoad(share: number): () => void {
  if (share <= 0) return () => {};
  const code = `
const share = ${share};
function tick() {
  const burst = 5 + Math.random() * 45;
  const t0 = Date.now();
  while (Date.now() - t0 < burst) {}
  setTimeout(tick, burst * (1 - share) / share * (0.5 + Math.random()));
}
tick();`;
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  return () => {
    child.kill('SIGTERM');
  };
}
