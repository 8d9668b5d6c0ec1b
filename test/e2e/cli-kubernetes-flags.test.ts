import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftovers, runCli, tempDir, writeScript } from '../support/cli.ts';

// The real CLI with --backend kubernetes, refused before anything starts: each mistake is one line
// naming the flag, exit 2, no result and nothing left behind. (No cluster is needed for these; the
// runs against the real-node cluster are in test/kubernetes/cli.test.ts.)

const valid = writeScript(`
export const options = { vus: 1, iterations: 1 };
export default function () {}
`);

const kubeconfig = path.join(tempDir('k6d-kubeconfig-'), 'config');
writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: only, context: {cluster: c, user: u}}]
current-context: only
`,
);
const notYaml = path.join(tempDir('k6d-kubeconfig-'), 'config');
writeFileSync(notYaml, 'clusters: [unclosed\n');

describe('the CLI refuses bad Kubernetes flags before the run', () => {
  it.each([
    [
      'a Kubernetes flag without --backend kubernetes',
      ['--namespace', 'load'],
      /error: --namespace: only with --backend kubernetes$/,
    ],
    ['an unknown backend', ['--backend', 'k8s'], /error: --backend: "k8s" is not one of local, kubernetes$/],
    [
      'a kubeconfig file that is not there',
      ['--backend', 'kubernetes', '--kubeconfig', '/nonexistent/config'],
      /error: --kubeconfig: no file at \/nonexistent\/config$/,
    ],
    [
      'a kubeconfig file that does not parse',
      ['--backend', 'kubernetes', '--kubeconfig', notYaml],
      /error: --kubeconfig: cannot be read: /,
    ],
    [
      'a context the kubeconfig lacks',
      ['--backend', 'kubernetes', '--kubeconfig', kubeconfig, '--context', 'prod'],
      /error: --context: "prod" is not in .*config \(it has: only\)$/,
    ],
    [
      'a namespace Kubernetes refuses',
      ['--backend', 'kubernetes', '--namespace', 'Load_Tests'],
      /error: --namespace: "Load_Tests" is not a valid namespace name$/,
    ],
    [
      'tolerations that are not YAML',
      ['--backend', 'kubernetes', '--tolerations', '[{key: a'],
      /error: --tolerations: not valid YAML: /,
    ],
    [
      'a k6 binary that is not k6',
      ['--backend', 'kubernetes', '--kubeconfig', kubeconfig, '--k6', '/bin/true'],
      /error: --k6: \/bin\/true is not a runnable k6 v1\.x or v2\.x$/,
    ],
  ])('%s', async (_name, args, message) => {
    const run = await runCli(['run', valid, ...args]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trim()).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.result).toBeUndefined();
    expect(leftovers(run.tmp)).toEqual([]);
  });
});
