import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readRunInputs } from '../../../../src/actions/run/inputs.ts';
import { splitRunnerLog } from '../../../../src/backends/kubernetes/backend.ts';
import {
  LABELS,
  PATHS,
  runnerJob,
  summaryPrefix,
  wrapperScript,
} from '../../../../src/backends/kubernetes/manifests.ts';
import { REQUIRED_PERMISSIONS } from '../../../../src/backends/kubernetes/permissions.ts';
import { classifyPod } from '../../../../src/backends/kubernetes/pods.ts';
import { describeExit } from '../../../../src/k6/exit-codes.ts';
import { planRun } from '../../../../src/run/plan.ts';

const spec = {
  runId: 'rtest1',
  namespace: 'load',
  image: 'grafana/k6:2.2.0',
  plan: planRun({ runners: 4, maxVUs: 40 }),
  placement: {
    nodeSelector: { pool: 'loadtest' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'loadtest', effect: 'NoSchedule' }],
    spread: 'one-per-node' as const,
  },
  env: [{ name: 'TOKEN', secret: 'api', key: 'token' }],
  activeDeadlineSeconds: 3600,
};

describe('runner Job manifest', () => {
  const job = runnerJob(spec, spec.plan.runners[2]!, { name: 'k6d-rtest1', uid: 'u-1' });
  const pod = job.spec!.template.spec!;
  const container = pod.containers[0]!;

  it('runs segment 2/4:3/4 paused with the REST API on all interfaces, the archive last', () => {
    const args = container.command!;
    expect(args.slice(0, 2)).toEqual(['sh', '-c']);
    const k6 = args.slice(4);
    expect(k6.slice(0, 4)).toEqual(['run', '--paused', '--address', '0.0.0.0:6565']);
    expect(k6[k6.indexOf('--execution-segment') + 1]).toBe('2/4:3/4');
    expect(k6[k6.indexOf('--execution-segment-sequence') + 1]).toBe('0,1/4,2/4,3/4,1');
    expect(k6.at(-1)).toBe('/k6d/archive/archive.tar');
  });

  it('is hardened', () => {
    expect(job.spec!.backoffLimit).toBe(0);
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(container.securityContext).toEqual({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('is owned by the run ConfigMap and labelled with the run id and runner', () => {
    expect(job.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'ConfigMap', uid: 'u-1' }),
    ]);
    expect(job.spec!.template.metadata!.labels).toMatchObject({
      [LABELS.runId]: 'rtest1',
      [LABELS.runner]: '2',
    });
  });

  it('places runners on the dedicated nodes, never two on one node', () => {
    expect(pod.nodeSelector).toEqual({ pool: 'loadtest' });
    expect(pod.tolerations).toEqual(spec.placement.tolerations);
    expect(pod.affinity!.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution![0]).toEqual({
      labelSelector: { matchLabels: { [LABELS.runId]: 'rtest1' } },
      topologyKey: 'kubernetes.io/hostname',
    });
  });

  it('passes Secret references, not values', () => {
    expect(container.env).toContainEqual({
      name: 'TOKEN',
      valueFrom: { secretKeyRef: { name: 'api', key: 'token' } },
    });
    expect(container.env).toContainEqual({ name: 'K6D_RUNNER_INDEX', value: '2' });
  });
});

describe('runner log', () => {
  const prefix = summaryPrefix('rtest1');

  it('gives the summary from its prefixed lines, even with k6 log lines between them', () => {
    const log = [
      'level=info msg="hi"',
      `${prefix}| {`,
      'time="2026-11-21T09:00:00Z" level=warning msg="from stderr, arrived late"',
      `${prefix}|   "metrics": {}`,
      `${prefix}| }`,
      `${prefix}end`,
      'last line',
    ].join('\n');
    const { summary, rest } = splitRunnerLog(log, 'rtest1');
    expect(JSON.parse(summary!)).toEqual({ metrics: {} });
    expect(rest).toBe(
      'level=info msg="hi"\ntime="2026-11-21T09:00:00Z" level=warning msg="from stderr, arrived late"\nlast line',
    );
  });

  it('gives no summary when it is missing, incomplete, or from another run', () => {
    expect(splitRunnerLog('no summary here', 'rtest1')).toEqual({ rest: 'no summary here' });
    expect(splitRunnerLog(`${prefix}| {"metrics":`, 'rtest1').summary).toBeUndefined();
    expect(
      splitRunnerLog(`${summaryPrefix('other')}| {}\n${summaryPrefix('other')}end`, 'rtest1').summary,
    ).toBeUndefined();
  });

  it('is what the wrapper prints, through a real shell', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'k6d-wrapper-'));
    const summaryFile = path.join(dir, 'summary.json');
    // As k6 writes it: no newline at the end.
    writeFileSync(summaryFile, '{\n  "metrics": {"x": 1}\n}');
    const script = wrapperScript('rtest1').replaceAll(PATHS.summary, summaryFile);
    // A fake k6 that logs to stderr and exits 99.
    writeFileSync(path.join(dir, 'k6'), '#!/bin/sh\necho "k6 log line" >&2\nexit 99\n', { mode: 0o755 });
    const out = spawnSync('sh', ['-c', script, 'k6d', 'run', 'x.tar'], {
      env: { PATH: `${dir}:${process.env.PATH}` },
      encoding: 'utf8',
    });
    expect(out.status).toBe(99);
    expect(JSON.parse(splitRunnerLog(out.stdout + out.stderr, 'rtest1').summary!)).toEqual({
      metrics: { x: 1 },
    });
  });
});

describe('Pod states', () => {
  it('tells unschedulable, image pull errors, OOM kills and exit codes apart', () => {
    expect(
      classifyPod({
        metadata: { name: 'p' },
        status: {
          phase: 'Pending',
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message: '0/5 nodes are available',
            },
          ],
        },
      }),
    ).toEqual({ kind: 'pending', pod: 'p', unschedulable: '0/5 nodes are available' });
    expect(
      classifyPod({
        metadata: { name: 'p' },
        status: {
          containerStatuses: [
            {
              name: 'k6',
              image: 'x',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } },
            },
          ],
        },
      }),
    ).toEqual({ kind: 'failed', pod: 'p', reason: 'ImagePullBackOff: not found' });
    expect(
      classifyPod({
        metadata: { name: 'p' },
        spec: { nodeName: 'n1', containers: [] },
        status: {
          phase: 'Failed',
          containerStatuses: [
            {
              name: 'k6',
              image: 'x',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 137, reason: 'OOMKilled' } },
            },
          ],
        },
      }),
    ).toEqual({ kind: 'ended', pod: 'p', code: 137, reason: 'OOMKilled', node: 'n1' });
    expect(describeExit(137, 'OOMKilled')).toBe('exit 137: failed (OOMKilled)');
  });
});

describe('examples/rbac.yaml', () => {
  it('grants exactly what the permission check asks for', () => {
    const docs = readFileSync(path.resolve(import.meta.dirname, '../../../../examples/rbac.yaml'), 'utf8')
      .split(/^---$/m)
      .map(
        (d) =>
          parse(d) as {
            kind: string;
            rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
          },
      );
    const role = docs.find((d) => d.kind === 'Role')!;
    const granted = role.rules!.flatMap((r) =>
      r.resources.flatMap((res) => r.verbs.map((v) => `${r.apiGroups[0]}|${res}|${v}`)),
    );
    const needed = REQUIRED_PERMISSIONS.map(
      (p) => `${p.group}|${p.resource}${p.subresource ? `/${p.subresource}` : ''}|${p.verb}`,
    );
    expect(granted.sort()).toEqual(needed.sort());
  });
});

describe('run action inputs', () => {
  const inputs = (values: Record<string, string>) => readRunInputs((name) => values[name] ?? '');

  it('reads placement, env and defaults', () => {
    const i = inputs({
      script: 'load.js',
      runners: '4',
      'node-selector': 'pool=loadtest\n# comment\n',
      tolerations: '- {key: dedicated, operator: Equal, value: loadtest, effect: NoSchedule}',
      env: 'BASE_URL=https://x.example/a=b',
      'secret-env': 'TOKEN=api/token',
      resources: '{requests: {cpu: 2, memory: 1Gi}}',
    });
    expect(i.config.runners).toBe(4);
    expect(i.backend).toBe('kubernetes');
    expect(i.image).toBe('grafana/k6:2.2.0');
    expect(i.nodeSelector).toEqual({ pool: 'loadtest' });
    expect(i.tolerations).toHaveLength(1);
    expect(i.env).toEqual([
      { name: 'BASE_URL', value: 'https://x.example/a=b' },
      { name: 'TOKEN', secret: 'api', key: 'token' },
    ]);
    expect(i.resources).toEqual({ requests: { cpu: '2', memory: '1Gi' } });
    expect(i.spread).toBe('one-per-node');
    expect(i.cleanup).toBe('always');
  });

  it.each([
    [{ script: 'a.js', spread: 'random' }, 'spread: "random" is not one of one-per-node, even, none'],
    [{ script: 'a.js', tolerations: '- {key: a, operator: Maybe}' }, /^tolerations: 0\.operator: /],
    [{ script: 'a.js', 'node-selector': 'pool' }, 'node-selector: "pool" is not KEY=value'],
    [{ script: 'a.js', 'secret-env': 'A=nokey' }, 'secret-env: "A=nokey" must be NAME=secret-name/key'],
    [{ script: 'a.js', namespace: 'Load_Tests' }, 'namespace: "Load_Tests" is not a valid namespace name'],
    [{ script: 'a.js', runners: '-2' }, 'runners: must be at least 1'],
    [{ script: 'a.js', cleanup: 'sometimes' }, /^cleanup: /],
    [{ script: 'a.js', sysctls: 'net ipv4.x=1' }, 'sysctls: "net ipv4.x" is not a sysctl name'],
  ])('refuses %o', (values, message) => {
    expect(() => inputs(values)).toThrowError(message);
  });
});
