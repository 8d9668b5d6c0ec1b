import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readRunInputs } from '../../../src/actions/run/inputs.ts';
import { addKubernetesOptions, readKubernetesFlags } from '../../../src/cli/kubernetes.ts';
import { ConfigurationError } from '../../../src/errors.ts';
import { kubernetesBackendOptions } from '../../../src/inputs/kubernetes.ts';
import { consoleLogger } from '../../../src/log.ts';
import { tempDir } from '../../support/cli.ts';

// The `pod-patch` input (`--pod-patch` on the CLI): YAML in an action, a file or YAML on the
// command line, checked before anything is created, its errors naming the input as written.

const action = (values: Record<string, string>) => readRunInputs((name) => values[name] ?? '');

function flags(...args: string[]) {
  const command = addKubernetesOptions(new Command('run').exitOverride().argument('<script>'));
  command.parse(['x.js', '--backend', 'kubernetes', ...args], { from: 'user' });
  return readKubernetesFlags(command);
}

const PATCH = `
spec:
  containers:
    - name: k6
      envFrom: [{configMapRef: {name: settings}}]
  volumes: [{name: data, emptyDir: {}}]
`;

describe('the pod-patch input', () => {
  it('reaches the backend options from the action input, parsed', () => {
    const run = { kc: new KubeConfig(), namespace: 'load', runId: 'rtest', log: consoleLogger() };
    const withPatch = kubernetesBackendOptions(action({ script: 'a.js', 'pod-patch': PATCH }), run);
    expect(withPatch.podPatch).toEqual(parse(PATCH));
    expect(kubernetesBackendOptions(action({ script: 'a.js' }), run)).not.toHaveProperty('podPatch');
  });

  it('is a YAML file or the YAML itself on the command line, read as the action reads it', () => {
    const file = path.join(tempDir('k6d-pod-patch-'), 'patch.yaml');
    writeFileSync(file, PATCH);
    const fromAction = action({ script: 'a.js', 'pod-patch': PATCH }).podPatch;
    expect(flags('--pod-patch', file)!.podPatch).toEqual(fromAction);
    expect(
      flags(
        '--pod-patch',
        '{spec: {containers: [{name: k6, envFrom: [{configMapRef: {name: settings}}]}], volumes: [{name: data, emptyDir: {}}]}}',
      )!.podPatch,
    ).toEqual(fromAction);
  });

  it.each([
    [
      'spec: {containers: [{name: k6, command: [sh]}]}',
      'spec.containers[k6].command is set by k6-distributed and cannot be patched',
    ],
    ['spec: {restartPolicy: Always}', 'spec.restartPolicy is set by k6-distributed and cannot be patched'],
    ['spec: {containers: [{image: x}]}', 'spec.containers[0]: has no name (the merge key of containers)'],
    ['[a, b]', 'value: Invalid input: expected record, received array'],
    ['spec: {a: [', 'not valid YAML'],
  ])('%s is refused in one line naming pod-patch, or --pod-patch', (yaml, message) => {
    expect(() => action({ script: 'a.js', 'pod-patch': yaml })).toThrowError(
      new RegExp(`^pod-patch: .*${literal(message)}`),
    );
    expect(() => flags('--pod-patch', yaml)).toThrowError(new RegExp(`^--pod-patch: .*${literal(message)}`));
    try {
      action({ script: 'a.js', 'pod-patch': yaml });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('names a file that is not there', () => {
    expect(() => flags('--pod-patch', 'patches/runner.yaml')).toThrowError(
      '--pod-patch: no file at patches/runner.yaml (give a YAML file or the YAML itself)',
    );
  });
});

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
