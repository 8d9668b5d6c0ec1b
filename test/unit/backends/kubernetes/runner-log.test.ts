import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { LogFollower } from '../../../../src/backends/kubernetes/api-client.ts';
import type { PodState } from '../../../../src/backends/kubernetes/pods.ts';
import { FOLLOW_AFTER_START_MS, RunnerLogs } from '../../../../src/backends/kubernetes/runner-log.ts';
import { COMPACT_SUMMARY_FORMAT } from '../../../../src/k6/summary.ts';
import { FakeBackendClock, settle } from './support/fakes.ts';

const compact = JSON.stringify(
  { format: COMPACT_SUMMARY_FORMAT, metrics: { iterations: { count: 3 } } },
  null,
  2,
);

/** Runner 0 on node n1, its k6 log followed by a fake that gets `chunks` and ends with `end`. */
function setup(options: { state?: PodState; plain?: () => Promise<string>; pod?: V1Pod } = {}) {
  const clock = new FakeBackendClock();
  const follows: Array<{ data(chunk: string): void; end(text: string): void; fail(e: Error): void }> = [];
  const follow: LogFollower = (_pod, o) => {
    let end!: (t: string) => void;
    let fail!: (e: Error) => void;
    const text = new Promise<string>((resolve, reject) => {
      end = resolve;
      fail = reject;
    });
    text.catch(() => {});
    follows.push({ data: (c) => o.onData?.(c), end, fail });
    return { inPlace: Promise.resolve(), text };
  };
  const plainReads: string[] = [];
  const logs = new RunnerLogs({
    follow,
    api: {
      readNamespacedPodLog: async ({ name }: { name: string }) => {
        plainReads.push(name);
        return options.plain ? options.plain() : '';
      },
    } as never,
    namespace: 'load',
    pods: {
      state: () => options.state ?? { kind: 'running', pod: 'k6d-r1-0', barrier: 'running' },
      pods: new Map<number, V1Pod>([[0, options.pod ?? { spec: { nodeName: 'n1', containers: [] } }]]),
      terminated: new Set(),
    },
    log: { debug: () => {} },
    clock,
    signal: new AbortController().signal,
    wholeRunMs: 3_660_000,
  });
  return { clock, logs, follows, plainReads };
}

describe("a runner's k6 log", () => {
  it('is followed shortly after the start, and a completed runner gives its summary as soon as the follow has it', async () => {
    const s = setup();
    s.logs.followAfterStart(0, 350);
    await s.clock.advance(350 + FOLLOW_AFTER_START_MS - 1);
    expect(s.follows).toHaveLength(0);
    await s.clock.advance(1);
    expect(s.follows).toHaveLength(1);
    s.follows[0]!.data(`level=warning msg="slow"\n${compact}\n`);
    // The follow has not ended (the kubelet ends it up to 1 s later): not waited for.
    const left = await s.logs.collect(0, { code: 0 }, false);
    expect(left).toEqual({
      summary: compact,
      logTail: 'level=warning msg="slow"',
      node: 'n1',
      insufficientVUs: 0,
    });
  });

  it('says why nothing could be read: a lost node, a kubelet out of inotify instances, a failed read', async () => {
    const lost = setup();
    expect(await lost.logs.collect(0, { code: null }, true)).toEqual({
      logTail: '',
      unreadable: 'its node n1 is gone',
      node: 'n1',
    });

    const inotify = setup({ plain: async () => 'failed to create fsnotify watcher: too many open files\n' });
    const left = await inotify.logs.collect(0, { code: 0 }, false);
    expect(left.unreadable).toBe(
      'the kubelet of node n1 could not follow its log: "failed to create fsnotify watcher: too many open files" (the node\'s fs.inotify.max_user_instances is used up)',
    );

    const failing = setup({
      plain: async () => {
        throw Object.assign(new Error('forbidden'), {
          code: 403,
          body: '{"message":"pods \\"k6d-r1-0\\" is forbidden"}',
        });
      },
    });
    expect(await failing.logs.collect(0, undefined, false)).toEqual({
      logTail: '(the log of Pod k6d-r1-0 could not be read: pods "k6d-r1-0" is forbidden)',
      unreadable: 'the log of Pod k6d-r1-0 could not be read: pods "k6d-r1-0" is forbidden',
      node: 'n1',
    });
  });

  it('says that a Pod that never started has no log, instead of the error reading it gives', async () => {
    const waitingK6 = {
      name: 'k6',
      image: 'k6',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } },
    };
    const cases: Array<{ state: PodState; pod: V1Pod }> = [
      {
        state: { kind: 'pending', pod: 'k6d-r1-0', unschedulable: '0/5 nodes are available' },
        pod: { spec: { containers: [] }, status: { phase: 'Pending' } },
      },
      {
        state: { kind: 'failed', pod: 'k6d-r1-0', reason: 'ImagePullBackOff: not found' },
        pod: { spec: { nodeName: 'n1', containers: [] }, status: { containerStatuses: [waitingK6] } },
      },
    ];
    for (const { state, pod } of cases) {
      const s = setup({
        state,
        pod,
        plain: async () => {
          throw new Error('Cannot parse content. No Content-Type defined.');
        },
      });
      const left = await s.logs.collect(0, { code: null, reason: 'Pod k6d-r1-0: …' }, false);
      expect(left).toMatchObject({
        logTail: '(Pod k6d-r1-0 never started: it has no log)',
        unreadable: 'Pod k6d-r1-0 never started: it has no log',
      });
      expect(s.plainReads).toEqual([]);
    }
  });

  it('is read plainly when its follow breaks, and a follow cut short while the runner runs is opened anew at its end', async () => {
    const s = setup({ plain: async () => `${compact}\n` });
    s.logs.followAfterStart(0, 0);
    await s.clock.advance(FOLLOW_AFTER_START_MS);
    s.follows[0]!.fail(new Error('the stream broke'));
    await settle();
    // Forgotten: the end of the runner follows its log anew.
    const saved = s.logs.save(0, 'k6d-r1-0');
    expect(s.follows).toHaveLength(2);
    s.follows[1]!.fail(new Error('the stream broke'));
    expect(await saved.text).toBe(`${compact}\n`);
    // Each broken follow falls back to one plain read of the log.
    expect(s.plainReads).toEqual(['k6d-r1-0', 'k6d-r1-0']);
  });
});
