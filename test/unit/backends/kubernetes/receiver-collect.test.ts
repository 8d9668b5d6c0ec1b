import { describe, expect, it } from 'vitest';
import type { FollowedLog, LogFollower } from '../../../../src/backends/kubernetes/api-client.ts';
import { ReceiverLogs } from '../../../../src/backends/kubernetes/receiver/collect.ts';
import { encodeIntervalLines } from '../../../../src/result/interval-lines.ts';

// The receiver's log as the API server would stream it: a fake follower (no cluster here; the
// real one is test/kubernetes/interval-latency.test.ts).

const delta = {
  key: 'http_req_duration{expected_response:true}',
  fromMs: 10_000,
  toMs: 10_100,
  seconds: true,
  h: {
    timestampMs: 10_100,
    count: 2,
    sum: 0.02,
    schema: 3,
    zeroThreshold: 0,
    zeroCount: 0,
    buckets: new Map([[-53, 2]]),
  },
};
const end = { pushes: 1, refused: 0 };

function logs(text: Promise<string>, aheadMs?: number, receiverState: object = { running: {} }) {
  const follows: Array<{ name: string; container: string }> = [];
  const follow: LogFollower = (pod) => {
    follows.push(pod);
    return { inPlace: Promise.resolve(), text } satisfies FollowedLog;
  };
  const receivers = new ReceiverLogs({
    follow,
    state: (index) => ({ kind: 'ended', pod: `k6d-r-${index}`, code: 0 }),
    pod: () => ({
      status: {
        containerStatuses: [
          {
            name: 'interval-receiver',
            image: 'node',
            imageID: '',
            ready: true,
            restartCount: 0,
            state: receiverState,
          },
        ],
      },
    }),
    clockAheadMs: () => aheadMs,
  });
  return { receivers, follows };
}

describe("the runners' interval receivers' logs", () => {
  it("are followed once per runner, and give its deltas moved to this machine's clock", async () => {
    const text = Promise.resolve(
      `k6d-iv-listening 127.0.0.1:6567\n${encodeIntervalLines([delta], end).join('\n')}\n`,
    );
    const { receivers, follows } = logs(text, 250);
    await receivers.follow(1, 'k6d-r-1');
    await receivers.follow(1, 'k6d-r-1');
    const got = await receivers.read(1);
    expect(follows).toEqual([{ name: 'k6d-r-1', container: 'interval-receiver' }]);
    expect(got).toEqual({ deltas: [{ ...delta, fromMs: 10_250, toMs: 10_350 }] });
  });

  it('are read when asked for a runner that ended by itself', async () => {
    const { receivers, follows } = logs(
      Promise.resolve(encodeIntervalLines([delta], end).join('\n')),
      undefined,
    );
    expect(await receivers.read(0)).toEqual({ deltas: [delta] });
    expect(follows).toEqual([{ name: 'k6d-r-0', container: 'interval-receiver' }]);
  });

  it('say why a runner has none, naming it', async () => {
    const cases: Array<[string, RegExp]> = [
      [
        'k6d-iv-listening 127.0.0.1:6567\n',
        /runner 2's interval receiver printed no end line \(its log ends with: "k6d-iv-listening/,
      ],
      [encodeIntervalLines([], { ...end, refused: 3 }).join('\n'), /refused 3 of the runner's pushes/],
      [
        encodeIntervalLines([], { ...end, late: true }).join('\n'),
        /started after its runner's test had begun \(its first pushes may be lost\)/,
      ],
      [
        encodeIntervalLines([], { ...end, error: 'listen on 127.0.0.1:6567: EADDRINUSE' }).join('\n'),
        /failed: listen on/,
      ],
      ['k6d-iv-keys []\nk6d-iv [0,1', /malformed receiver line/],
    ];
    for (const [text, why] of cases) {
      const { receivers } = logs(Promise.resolve(text));
      const got = await receivers.read(2);
      expect('missing' in got && got.missing).toMatch(why);
    }
    // Its image could not be pulled: no follow at all, the reason from its container's status.
    const never = logs(Promise.resolve(''), 0, {
      waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope"' },
    });
    await never.receivers.follow(2, 'k6d-r-2');
    expect(never.follows).toEqual([]);
    expect(await never.receivers.read(2)).toEqual({
      missing: `runner 2's interval receiver never started: ImagePullBackOff: Back-off pulling image "nope"`,
    });
    const { receivers } = logs(Promise.reject(new Error('HTTP 404')));
    expect(await receivers.read(2)).toEqual({
      missing: "runner 2's interval receiver: its log could not be read: HTTP 404",
    });
  });
});

describe('a receiver that never started', () => {
  it('is named with the reason its status gave before its Pod was deleted (the kubelet then says ContainerCreating)', async () => {
    const follows: string[] = [];
    let reason = { waiting: { reason: 'ErrImagePull', message: '401 Unauthorized' } } as object;
    const receivers = new ReceiverLogs({
      follow: (pod) => {
        follows.push(pod.name);
        return { inPlace: Promise.resolve(), text: Promise.resolve('') };
      },
      state: () => ({ kind: 'running', pod: 'k6d-r-0', barrier: 'exited' }) as never,
      pod: () => ({
        status: {
          containerStatuses: [
            {
              name: 'interval-receiver',
              image: 'n',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: reason,
            },
          ],
        },
      }),
      clockAheadMs: () => 0,
    });
    await receivers.follow(0, 'k6d-r-0');
    reason = { waiting: { reason: 'ContainerCreating' } };
    expect(await receivers.read(0)).toEqual({
      missing: "runner 0's interval receiver never started: ErrImagePull: 401 Unauthorized",
    });
    expect(follows).toEqual([]);
  });
});

describe("a receiver's log", () => {
  it('is whole once its end line came, before the follow itself ends (a kubelet ends it up to 1 s later)', async () => {
    const lines = `k6d-iv-listening 127.0.0.1:6567\n${encodeIntervalLines([delta], end).join('\n')}\n`;
    const receivers = new ReceiverLogs({
      follow: (_pod, options) => {
        setTimeout(() => options.onData?.(lines), 1);
        return { inPlace: Promise.resolve(), text: new Promise<string>(() => {}) };
      },
      state: () => ({ kind: 'running', pod: 'k6d-r-0', barrier: 'exited' }) as never,
      pod: () => undefined,
      clockAheadMs: () => 0,
    });
    await receivers.follow(0, 'k6d-r-0');
    expect(await receivers.read(0)).toEqual({ deltas: [delta] });
  });
});
