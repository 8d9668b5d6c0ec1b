import { describe, expect, it } from 'vitest';
import { type Cluster, cleanupLeftovers } from '../../../../src/actions/run/cleanup.ts';
import { readRunInputs } from '../../../../src/actions/run/inputs.ts';
import { recordingLogger } from '../../run/support/fakes.ts';

/*
 * The post step's logic (src/actions/run/cleanup.ts): what it removes after a cancelled or
 * crashed main step, given the state that step saved, with a fake cluster.
 */

function post(state: Record<string, string>, left: string[] = []) {
  const log = recordingLogger();
  const deleted: Array<[string, string]> = [];
  let inputsRead = 0;
  const cluster: Cluster = {
    defaultNamespace: () => 'from-kubeconfig',
    deleteRun: async (namespace, runId) => {
      deleted.push([namespace, runId]);
      return left;
    },
  };
  const done = cleanupLeftovers({
    log,
    getState: (name) => state[name] ?? '',
    inputs: () => {
      inputsRead++;
      return readRunInputs((name) => (name === 'script' ? 'load.js' : ''));
    },
    cluster: () => cluster,
  });
  return { done, log, deleted, inputsRead: () => inputsRead };
}

describe('the post step', () => {
  it('removes every run the main step left, in the namespace it saved', async () => {
    const p = post({ runId: 'r1,r2', namespace: 'perf', cleanup: 'never' });
    await p.done;
    expect(p.deleted).toEqual([
      ['perf', 'r1'],
      ['perf', 'r2'],
    ]);
    expect(p.log.lines).toContain(
      'info: post: removed every object of run r2 (cleanup policy never applies only to finished runs)',
    );
  });

  it("uses the kubeconfig's namespace when the main step saved none, and says what is left", async () => {
    const p = post({ runId: 'r1' }, ['pod/r1-0']);
    await p.done;
    expect(p.deleted).toEqual([['from-kubeconfig', 'r1']]);
    expect(p.log.lines).toEqual([
      'info: post: the run r1 did not finish its cleanup; removing its runners from namespace from-kubeconfig',
    ]);
  });

  it('does nothing, without reading the inputs, when the main step cleaned up or ran nothing on a cluster', async () => {
    const states: Record<string, string>[] = [{ runId: 'r1', cleaned: 'true' }, {}];
    for (const state of states) {
      const p = post(state);
      await p.done;
      expect(p.deleted).toEqual([]);
      expect(p.inputsRead()).toBe(0);
    }
  });
});
