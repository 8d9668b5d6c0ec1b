import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { checkArchiveSize, createRun } from '../../../../src/backends/kubernetes/create.ts';
import { MAX_ARCHIVE_BYTES } from '../../../../src/backends/kubernetes/manifests.ts';
import { ConfigurationError } from '../../../../src/errors.ts';
import { planRun } from '../../../../src/run/plan.ts';
import { smallRunSpec } from './support/fakes.ts';

const spec = smallRunSpec('r1', 3);

/** A fake API recording what is created; `configMapErrors` are thrown by the ConfigMap creates in turn. */
function fakeApi(configMapErrors: unknown[] = []) {
  const calls: string[] = [];
  const pods: V1Pod[] = [];
  const api = {
    createNamespacedConfigMap: async ({ body }: { body: V1ConfigMap }) => {
      calls.push(`create ConfigMap ${body.metadata?.name}`);
      const error = configMapErrors.shift();
      if (error) throw error;
      return { ...body, metadata: { ...body.metadata, uid: 'cm-uid' } };
    },
    readNamespacedConfigMap: async ({ name }: { name: string }) => {
      calls.push(`read ConfigMap ${name}`);
      return { metadata: { name, uid: 'cm-uid-read' } };
    },
    createNamespacedPod: async ({ body }: { body: V1Pod }) => {
      calls.push(`create Pod ${body.metadata?.name}`);
      pods.push(body);
      return body;
    },
  };
  return { api: api as unknown as Parameters<typeof createRun>[0], calls, pods };
}

describe("creating a run's objects", () => {
  it('refuses an archive a ConfigMap cannot hold, saying its size and what to do', () => {
    expect(() => checkArchiveSize(Buffer.alloc(MAX_ARCHIVE_BYTES))).not.toThrow();
    const big = () => checkArchiveSize(Buffer.alloc(2 * 1048576));
    expect(big).toThrow(ConfigurationError);
    expect(big).toThrow(
      /^script: its k6 archive is 2\.00 MiB, more than a ConfigMap holds \(1 MiB\); move large data files/,
    );
  });

  it('creates the ConfigMap first, then every runner Pod owned by it', async () => {
    const f = fakeApi();
    await createRun(f.api, spec, Buffer.from('tar'));
    expect(f.calls[0]).toBe('create ConfigMap k6d-r1');
    expect(f.calls.slice(1).sort()).toEqual([
      'create Pod k6d-r1-0',
      'create Pod k6d-r1-1',
      'create Pod k6d-r1-2',
    ]);
    for (const pod of f.pods)
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ name: 'k6d-r1', uid: 'cm-uid' });
  });

  it('reads the ConfigMap a retried create finds there (its first answer was lost), and owns the Pods by it', async () => {
    const f = fakeApi([
      Object.assign(new Error('service unavailable'), { code: 503 }),
      Object.assign(new Error('already exists'), { code: 409 }),
    ]);
    await createRun(f.api, { ...spec, plan: planRun({ runners: 1, maxVUs: 1 }) }, Buffer.from('tar'));
    expect(f.calls).toEqual([
      'create ConfigMap k6d-r1',
      'create ConfigMap k6d-r1',
      'read ConfigMap k6d-r1',
      'create Pod k6d-r1-0',
    ]);
    expect(f.pods[0]!.metadata?.ownerReferences?.[0]?.uid).toBe('cm-uid-read');
  });

  it('does not take a 409 on the first attempt for its own object', async () => {
    const f = fakeApi([Object.assign(new Error('already exists'), { code: 409 })]);
    await expect(createRun(f.api, spec, Buffer.from('tar'))).rejects.toThrow('already exists');
    expect(f.calls).toEqual(['create ConfigMap k6d-r1']);
  });
});

describe('-e values on Kubernetes', () => {
  it('warns once, naming the variables but never their values, and the Secret input as its user writes it', async () => {
    const warnings: string[] = [];
    const log = { warning: (m: string) => warnings.push(m) };
    const plan = {
      ...planRun({ runners: 2, maxVUs: 2 }),
      env: { API_TOKEN: 's3cret', BASE_URL: 'http://x' },
    };
    await createRun(fakeApi().api, { ...spec, plan, secretEnvInput: '--secret-env' }, Buffer.from('a'), log);
    expect(warnings).toEqual([
      "-e API_TOKEN, BASE_URL: their values are in every runner Pod's environment in namespace load (readable by whoever can read its Pods, and stored in etcd); give secrets with --secret-env NAME=secret/key instead",
    ]);
    expect(warnings.join('')).not.toMatch(/s3cret|http:\/\/x/);

    warnings.length = 0;
    await createRun(fakeApi().api, { ...spec, plan }, Buffer.from('a'), log);
    expect(warnings[0]).toMatch(/give secrets with secret-env NAME=secret\/key instead$/);

    warnings.length = 0;
    await createRun(fakeApi().api, spec, Buffer.from('a'), log);
    expect(warnings).toEqual([]);
  });
});
