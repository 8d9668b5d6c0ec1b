import { describe, expect, it } from 'vitest';
import type { LogFollower } from '../../../../../src/backends/kubernetes/api-client.ts';
import {
  BARRIER_FOLLOW_ATTEMPTS,
  BarrierFollows,
} from '../../../../../src/backends/kubernetes/barrier/follow.ts';
import type { PodState } from '../../../../../src/backends/kubernetes/pods.ts';
import { settle } from '../support/fakes.ts';

/** A follow the test controls: `take()` as the kubelet answers, `feed()` lines, `end()`/`fail()` it. */
interface FakeFollow {
  container: string;
  onData?: (chunk: string) => void;
  take(): void;
  end(): void;
  fail(error: Error): void;
}

function setup(states: PodState[]) {
  const follows: FakeFollow[] = [];
  const follow: LogFollower = (pod, options) => {
    let take!: () => void;
    let refuse!: (e: Error) => void;
    let end!: (text: string) => void;
    let fail!: (e: Error) => void;
    const inPlace = new Promise<void>((resolve, reject) => {
      take = resolve;
      refuse = reject;
    });
    const text = new Promise<string>((resolve, reject) => {
      end = resolve;
      fail = reject;
    });
    inPlace.catch(() => {});
    text.catch(() => {});
    let taken = false;
    follows.push({
      container: pod.container,
      ...(options.onData ? { onData: options.onData } : {}),
      take: () => {
        taken = true;
        take();
      },
      end: () => end(''),
      fail: (e) => {
        if (!taken) refuse(e);
        fail(e);
      },
    });
    return { inPlace, text };
  };
  const closing = new AbortController();
  const debug: string[] = [];
  const barriers = new BarrierFollows({
    follow,
    state: (i) => states[i]!,
    log: { debug: (m) => debug.push(m) },
    clock: { now: () => 0 },
    signal: closing.signal,
    timeoutMs: 3_660_000,
  });
  return { barriers, follows, closing, debug };
}

const runningPod = (barrier: 'starting' | 'running' | 'exited' | 'failed' = 'running'): PodState => ({
  kind: 'running',
  pod: 'k6d-r1-0',
  barrier,
});

describe("following a runner's barrier container", () => {
  it('opens a broken follow again from the start of the log, and gives up after a few breaks', async () => {
    const { barriers, follows } = setup([runningPod()]);
    let ended: number | undefined;
    barriers.follow(0, 'k6d-r1-0', (s) => {
      ended = s;
    });
    // Following the same runner again changes nothing.
    barriers.follow(0, 'k6d-r1-0', () => {});
    expect(follows).toHaveLength(1);
    expect(follows[0]!.container).toBe('barrier');
    for (let attempt = 1; attempt <= BARRIER_FOLLOW_ATTEMPTS; attempt++) {
      const f = follows[attempt - 1]!;
      f.take();
      f.onData!('k6d-ready 1000\nk6d-vus 1500 3\n');
      f.fail(new Error('the stream broke'));
      await settle();
    }
    expect(follows).toHaveLength(BARRIER_FOLLOW_ATTEMPTS);
    const follow = barriers.get(0)!;
    expect(follow.failed).toBe(true);
    // Read anew each time: one sample, not five.
    follow.log.feed('k6d-end 2000 9\n');
    expect(follow.log.vusRecord()!.changes).toEqual([{ atMs: 1500, vus: 3 }]);
    expect(ended).toBe(9);
  });

  it('polls a runner whose follow is refused through the pod proxy instead (failed at once)', async () => {
    const { barriers, follows } = setup([runningPod()]);
    barriers.follow(0, 'k6d-r1-0', () => {});
    follows[0]!.fail(Object.assign(new Error('HTTP 503'), { code: 503 }));
    await settle();
    expect(follows).toHaveLength(1);
    expect(barriers.get(0)!.failed).toBe(true);
    expect(barriers.gate(0)).toBe('failed');
  });

  it("does not open again a follow whose container's Pod is no longer running, nor one after the end line or the cleanup", async () => {
    const states = [runningPod(), runningPod(), runningPod()];
    const { barriers, follows, closing } = setup(states);
    barriers.follow(0, 'k6d-r1-0', () => {});
    barriers.follow(1, 'k6d-r1-0', () => {});
    barriers.follow(2, 'k6d-r1-0', () => {});
    for (const f of follows) f.take();
    states[0] = { kind: 'ended', pod: 'k6d-r1-0', code: 0 };
    follows[0]!.end();
    follows[1]!.onData!('k6d-ready 1000\nk6d-end 2000 9\n');
    follows[1]!.end();
    await settle();
    closing.abort();
    follows[2]!.end();
    await settle();
    expect(follows).toHaveLength(3);
    expect(barriers.get(0)!.failed).toBe(true);
    expect(barriers.get(1)!.failed).toBe(false);
    expect(barriers.get(2)!.failed).toBe(false);
  });

  it('tells each runner waiting, ready or failed, and all done once none waits; listeners hear the lines that count', () => {
    const states: PodState[] = [
      { kind: 'pending', pod: 'k6d-r1-0' },
      runningPod('starting'),
      runningPod('failed'),
    ];
    const { barriers, follows } = setup(states);
    let heard = 0;
    const off = barriers.onChange(() => heard++);
    expect(barriers.gate(0)).toBe('waiting');
    expect(barriers.gate(1)).toBe('waiting');
    expect(barriers.gate(2)).toBe('failed');
    expect(barriers.allDone(3)).toBe(false);
    states[0] = runningPod('exited');
    states[1] = runningPod();
    barriers.follow(1, 'k6d-r1-1', () => {});
    follows[0]!.take();
    follows[0]!.onData!('k6d-vus 1 1\n');
    expect(heard).toBe(0);
    follows[0]!.onData!('k6d-ready 1000\n');
    expect(heard).toBe(1);
    expect(barriers.gate(0)).toBe('ready');
    expect(barriers.gate(1)).toBe('ready');
    expect(barriers.allDone(3)).toBe(true);
    off();
    follows[0]!.onData!('k6d-end 2000 9\n');
    expect(heard).toBe(1);
  });
});
