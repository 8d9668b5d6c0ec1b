import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** The calibration target (bench/calibration/target-server.ts) running in its own process. */
export interface CalibrationTarget {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** SHA-256 iterations per ms measured at its start (the CPU work's unit). */
  iterationsPerMs: number;
  stop(): Promise<void>;
}

/**
 * Starts the target as a child Node process and waits for its port. Throws when it exits first.
 */
export async function startCalibrationTarget(): Promise<CalibrationTarget> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'target-server.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`calibration target exited with ${code}`)));
  });
  const { port, iterationsPerMs } = JSON.parse(first) as { port: number; iterationsPerMs: number };
  return {
    url: `http://127.0.0.1:${port}`,
    iterationsPerMs,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
