import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RUN_ACTION_INPUTS, readRunInputs } from '../../../src/actions/run/inputs.ts';
import { runnerPod } from '../../../src/backends/kubernetes/manifests.ts';
import { addKubernetesOptions, readKubernetesFlags, withFlagNames } from '../../../src/cli/kubernetes.ts';
import { buildProgram } from '../../../src/cli/program.ts';
import { ConfigurationError } from '../../../src/errors.ts';
import { DEFAULTS } from '../../../src/inputs/defaults.ts';
import { KUBERNETES_INPUTS, kubernetesBackendOptions } from '../../../src/inputs/kubernetes.ts';
import { planRun } from '../../../src/run/plan.ts';
import { ROOT } from '../../support/cli.ts';

// The Kubernetes inputs are read by one parser for the run action, the root action and the CLI:
// the same values are accepted, and every error names the input as the user wrote it (`spread`
// in a workflow, `--spread` on the command line).

const action = (values: Record<string, string>) => readRunInputs((name) => values[name] ?? '');

/** The flags of `k6-distributed run … <args>` as the CLI reads them. */
function flags(...args: string[]) {
  const command = addKubernetesOptions(new Command('run').exitOverride().argument('<script>'));
  command.parse(['x.js', ...args], { from: 'user' });
  return readKubernetesFlags(command);
}

const POD_SPEC = {
  'image-pull-secrets': 'regcred, mirror-creds\nthird',
  'service-account': 'load-runner',
  'pod-annotations': 'sidecar.istio.io/inject=false\nexample.com/team=perf load',
  'priority-class': 'load-low',
  'barrier-resources': '{requests: {cpu: 5m, memory: 16Mi}, limits: {memory: 64Mi}}',
};

describe('the pod-spec inputs', () => {
  it('reach the runner Pod from the action inputs', () => {
    const inputs = action({ script: 'a.js', ...POD_SPEC });
    const options = kubernetesBackendOptions(inputs, {
      kc: new KubeConfig(),
      namespace: 'load',
      runId: 'rtest',
      log: { info() {}, warning() {}, error() {}, debug() {} },
    });
    const plan = planRun({ runners: 2, maxVUs: 2 });
    const pod = runnerPod({ ...options, plan }, plan.runners[0]!, { name: 'k6d-rtest', uid: 'u' });
    expect(pod.spec!.imagePullSecrets).toEqual([
      { name: 'regcred' },
      { name: 'mirror-creds' },
      { name: 'third' },
    ]);
    expect(pod.spec!.serviceAccountName).toBe('load-runner');
    expect(pod.spec!.automountServiceAccountToken).toBe(false);
    expect(pod.metadata!.annotations).toEqual({
      'sidecar.istio.io/inject': 'false',
      'example.com/team': 'perf load',
    });
    expect(pod.spec!.priorityClassName).toBe('load-low');
    expect(pod.spec!.containers.find((c) => c.name === 'barrier')!.resources).toEqual({
      requests: { cpu: '5m', memory: '16Mi' },
      limits: { memory: '64Mi' },
    });
  });

  it('are the same on the command line, one flag per value where the action takes lines', () => {
    const cli = flags(
      '--backend',
      'kubernetes',
      '--image-pull-secrets',
      'regcred,mirror-creds',
      '--image-pull-secrets',
      'third',
      '--service-account',
      'load-runner',
      '--pod-annotations',
      'sidecar.istio.io/inject=false',
      '--pod-annotations',
      'example.com/team=perf load',
      '--priority-class',
      'load-low',
      '--barrier-resources',
      POD_SPEC['barrier-resources'],
    );
    const {
      config: _c,
      backend: _b,
      jobSummary: _j,
      ...fromAction
    } = action({ script: 'a.js', ...POD_SPEC });
    expect(cli).toEqual(fromAction);
  });

  it.each([
    ['image-pull-secrets', 'Regcred', '"Regcred" is not a valid Secret name'],
    ['service-account', 'load_runner', '"load_runner" is not a valid ServiceAccount name'],
    ['priority-class', 'Low!', '"Low!" is not a valid PriorityClass name'],
    ['pod-annotations', 'no value', '"no value" is not KEY=value'],
    ['pod-annotations', '-bad/key=1', '"-bad/key" is not a valid annotation key'],
    ['barrier-resources', '{limit: {memory: 1Gi}}', /^barrier-resources: value: Unrecognized key: "limit"/],
    [
      'resources',
      '{requests: {cpu: lots}}',
      /^resources: requests\.cpu: "lots" is not a Kubernetes quantity \(e\.g\. 500m, 2, 4Gi\)/,
    ],
  ])('refuse a bad %s (%s), naming the input or the flag', (input, value, message) => {
    const expected = typeof message === 'string' ? `${input}: ${message}` : message;
    expect(() => action({ script: 'a.js', [input]: value })).toThrowError(expected);
    const asFlag =
      typeof message === 'string' ? `--${input}: ${message}` : new RegExp(`^--${message.source.slice(1)}`);
    expect(() => flags('--backend', 'kubernetes', `--${input}`, value)).toThrowError(asFlag);
  });
});

describe('the CLI’s Kubernetes flags', () => {
  it('take the action’s defaults', () => {
    const { config: _c, backend: _b, jobSummary: _j, ...fromAction } = action({ script: 'a.js' });
    expect(flags('--backend', 'kubernetes')).toEqual(fromAction);
    expect(fromAction).toMatchObject({
      image: DEFAULTS.runnerImage,
      spread: DEFAULTS.spread,
      cleanup: DEFAULTS.cleanup,
      scheduleTimeoutS: DEFAULTS.scheduleTimeoutS,
    });
  });

  it('read placement, env and timeouts as the action does', () => {
    const cli = flags(
      '--backend',
      'kubernetes',
      '--namespace',
      'load',
      '--node-selector',
      'pool=loadtest',
      '--node-selector',
      'zone=a',
      '--tolerations',
      '[{key: dedicated, operator: Exists}]',
      '--spread',
      'even',
      '--env',
      'A=1',
      '--secret-env',
      'TOKEN=api/token',
      '--resources',
      '{limits: {memory: 2Gi}}',
      '--schedule-timeout',
      '30',
      '--cleanup',
      'on-success',
    );
    const {
      config: _c,
      backend: _b,
      jobSummary: _j,
      ...fromAction
    } = action({
      script: 'a.js',
      namespace: 'load',
      'node-selector': 'pool=loadtest\nzone=a',
      tolerations: '[{key: dedicated, operator: Exists}]',
      spread: 'even',
      env: 'A=1',
      'secret-env': 'TOKEN=api/token',
      resources: '{limits: {memory: 2Gi}}',
      'schedule-timeout': '30',
      cleanup: 'on-success',
    });
    expect(cli).toEqual(fromAction);
    expect(cli).toMatchObject({ nodeSelector: { pool: 'loadtest', zone: 'a' }, scheduleTimeoutS: 30 });
  });

  it('run locally by default and refuse a Kubernetes flag there rather than ignore it', () => {
    expect(flags()).toBeUndefined();
    expect(() => flags('--node-selector', 'pool=x')).toThrowError(
      '--node-selector: only with --backend kubernetes',
    );
    expect(() => flags('--backend', 'cloud')).toThrowError(
      '--backend: "cloud" is not one of local, kubernetes',
    );
    expect(() => flags('--backend', 'kubernetes', '--schedule-timeout', '0')).toThrowError(
      '--schedule-timeout: must be more than 0 seconds',
    );
  });

  it('name the flag when the API server refuses a value the backend names by its input', () => {
    const renamed = withFlagNames(new ConfigurationError('resources: creating the runners failed (422)'));
    expect((renamed as Error).message).toBe('--resources: creating the runners failed (422)');
    const other = new ConfigurationError('script: x.js does not exist');
    expect(withFlagNames(other)).toBe(other);
  });

  it('are every Kubernetes input, with the action’s defaults in the help', () => {
    const run = buildProgram().commands.find((c) => c.name() === 'run')!;
    const long = new Map(run.options.map((o) => [o.long, o.defaultValue]));
    for (const input of KUBERNETES_INPUTS) expect(long.has(`--${input}`), input).toBe(true);
    expect(long.get('--runners')).toBe(String(DEFAULTS.runners));
    expect(long.get('--out')).toBe(DEFAULTS.resultPath);
    expect(long.get('--start-timeout')).toBe(String(DEFAULTS.startTimeoutS));
    expect(long.get('--grace')).toBe(String(DEFAULTS.graceS));
    expect(long.get('--progress-interval')).toBe(String(DEFAULTS.progressIntervalS));
    expect(long.get('--schedule-timeout')).toBe(String(DEFAULTS.scheduleTimeoutS));
    expect(long.get('--backend')).toBe(DEFAULTS.cliBackend);
  });
});

describe('actions/run/action.yml', () => {
  it('declares exactly the inputs the run action reads', () => {
    const declared = Object.keys(
      (parse(readFileSync(path.join(ROOT, 'actions/run/action.yml'), 'utf8')) as { inputs: object }).inputs,
    );
    expect([...declared].sort()).toEqual([...RUN_ACTION_INPUTS].sort());
  });
});

describe('the interval-receiver-image input', () => {
  const options = (inputs: ReturnType<typeof action>) =>
    kubernetesBackendOptions(inputs, {
      kc: new KubeConfig(),
      namespace: 'load',
      runId: 'rtest',
      log: { info() {}, warning() {}, error() {}, debug() {} },
    });

  it('defaults to a public Node image, takes another, and none turns the receiver off', () => {
    expect(options(action({ script: 'a.js' })).receiverImage).toBe(DEFAULTS.intervalReceiverImage);
    expect(DEFAULTS.intervalReceiverImage).toBe('node:24-slim');
    expect(
      options(action({ script: 'a.js', 'interval-receiver-image': 'mirror.example/node:24' })).receiverImage,
    ).toBe('mirror.example/node:24');
    expect(
      options(action({ script: 'a.js', 'interval-receiver-image': 'none' })).receiverImage,
    ).toBeUndefined();
    expect(
      flags('--backend', 'kubernetes', '--interval-receiver-image', 'none')!.receiverImage,
    ).toBeUndefined();
  });
});
