import { describe, expect, it } from 'vitest';
import { RUN_ACTION_INPUTS, readRunInputs } from '../../../../src/actions/run/inputs.ts';

// The run action's `zones` input, read with the step's other inputs as every zone's defaults.

const inputs = (values: Record<string, string>) =>
  readRunInputs((name) => ({ script: 'load.js', ...values })[name] ?? '');

describe('the zones input of the run action', () => {
  it("reads each zone over the step's Kubernetes inputs", () => {
    const read = inputs({
      'node-selector': 'pool=loadtest',
      namespace: 'load-tests',
      zones: `
- {name: eu, context: eu, share: 70, runners: 3}
- {name: us, context: us, share: 30, runners: 2, namespace: us-tests}
`,
    });
    expect(
      read.zones!.map((z) => [z.name, z.share, z.runners, z.kubernetes.context, z.kubernetes.namespace]),
    ).toEqual([
      ['eu', 70, 3, 'eu', 'load-tests'],
      ['us', 30, 2, 'us', 'us-tests'],
    ]);
    expect(read.zones![1]!.kubernetes.nodeSelector).toEqual({ pool: 'loadtest' });
    expect(RUN_ACTION_INPUTS).toContain('zones');
  });

  it('is no zones when not given, and refuses them with backend local', () => {
    expect(inputs({}).zones).toBeUndefined();
    expect(() => inputs({ backend: 'local', zones: '[{name: a, share: 100, runners: 1}]' })).toThrow(
      /^zones: only with backend kubernetes$/,
    );
    expect(() => inputs({ zones: '[{name: a, share: 90, runners: 1}]' })).toThrow(
      /^zones: the zones' shares add up to 90, not 100/,
    );
  });
});
