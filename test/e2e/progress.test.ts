import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { TimelineSchema } from '../../src/result/timeline-schema.ts';
import { k6ProcessesUnder, leftovers, startCli, writeScript } from '../support/cli.ts';

// Real k6 runners through the real CLI against a real HTTP server on 127.0.0.1; one runner's
// process is frozen with SIGSTOP, so its REST API accepts connections and never answers.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

/** Seconds since the start in a progress line (`t=12s ...`), for each progress line of `out`. */
function progressLines(out: string): Array<{ t: number; line: string }> {
  return [...out.matchAll(/t=(\d+)s (?:ended: )?runners=[^\n]*/g)].map((m) => ({
    t: Number(m[1]),
    line: m[0],
  }));
}

describe('the live progress line with a frozen runner', () => {
  it('keeps its interval, names the runner that does not answer, and the deadline holds', async () => {
    const script = writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 4, duration: '8s', gracefulStop: '0s' } },
};
export default function () { http.get(__ENV.TARGET + '/progress'); sleep(0.05); }
`);
    const { child, done } = startCli([
      'run',
      script,
      '--runners',
      '2',
      '--grace',
      '2',
      '--progress-interval',
      '2',
      '--',
      '-e',
      `TARGET=${target.url}`,
    ]);
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    // Freeze runner 1 once the first progress line showed both answering.
    const frozen = await new Promise<number>((resolve, reject) => {
      const timer = setInterval(() => {
        if (!/t=\d+s runners=2\/2 VUs=4 /.test(out)) return;
        clearInterval(timer);
        const line = execFileSync('pgrep', ['-a', '-P', String(child.pid)], { encoding: 'utf8' })
          .split('\n')
          .find((l) => l.includes('--execution-segment 1/2:1'));
        if (!line) return reject(new Error(`no k6 process of runner 1:\n${out}`));
        const pid = Number(line.split(' ')[0]);
        process.kill(pid, 'SIGSTOP');
        resolve(Date.now());
      }, 50);
    });
    const run = await done;
    const ended = Date.now();
    const lines = progressLines(run.stdout + run.stderr);
    const r = run.result!;
    const startedAt = Date.parse(r.startedAt);
    // totalDuration 8 s + grace 2 s; then the stop to the frozen runner gives up after 3 s and it is
    // killed. Before, each poll of it held the monitor for 10 s: it ended 16 s past the deadline.
    expect(ended - startedAt, out).toBeLessThan((8 + 2 + 6) * 1000);
    expect(r.failureKinds).toContain('deadline');
    expect(r.runners[1]).toMatchObject({ exit: 'killed by SIGKILL' });
    // Lines kept coming every 2 s (plus the 2 s poll timeout at most) while runner 1 was frozen.
    const whileFrozen = lines.filter(
      (l) => startedAt + l.t * 1000 > frozen + 2500 && !l.line.includes('ended'),
    );
    expect(whileFrozen.length, out).toBeGreaterThanOrEqual(3);
    for (const [a, b] of whileFrozen.slice(1).map((l, i) => [whileFrozen[i]!, l] as const))
      expect(b.t - a.t, out).toBeLessThanOrEqual(4);
    for (const l of whileFrozen) expect(l.line).toContain('(no answer: runner 1)');
    expect(lines.at(-1)!.line, out).toMatch(/ended: runners=0\/2 VUs=0 RPS=\d/);
    for (const l of lines) expect(l.line).not.toMatch(/=-/);
    const timeline = TimelineSchema.parse(r.timeline);
    expect(timeline.points.length).toBeGreaterThanOrEqual(2);
    expect(timeline.points[0]!.vus).toBe(4);
    expect(k6ProcessesUnder(run.tmp)).toEqual([]);
    expect(leftovers(run.tmp)).toEqual([]);
  });
});
