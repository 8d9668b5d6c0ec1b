import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { podMergeKey } from '../../../../src/backends/kubernetes/pod-patch.ts';
import { type Json, strategicMerge } from '../../../../src/backends/kubernetes/strategic-merge.ts';

// The strategic merge patch as Kubernetes applies it to a Pod: the cases of "Update API Objects in
// Place Using kubectl patch" (kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/)
// and of the strategic-merge-patch design doc, with the merge keys of k8s.io/api core/v1.

const merge = (base: unknown, patch: unknown) => strategicMerge(base as Json, patch as Json, podMergeKey);

describe('strategic merge of a Pod', () => {
  it('merges containers by name: a new container joins, first, as kubectl patch adds it', () => {
    // The doc's example: the patch's container is added, the existing one kept.
    const base = { spec: { containers: [{ name: 'patch-demo-ctr', image: 'nginx' }] } };
    const patch = { spec: { containers: [{ name: 'patch-demo-ctr-2', image: 'redis' }] } };
    expect(merge(base, patch)).toEqual({
      spec: {
        containers: [
          { name: 'patch-demo-ctr-2', image: 'redis' },
          { name: 'patch-demo-ctr', image: 'nginx' },
        ],
      },
    });
  });

  it('merges a container with the same name field by field, its env by name and its mounts by mountPath', () => {
    const base = {
      spec: {
        containers: [
          {
            name: 'k6',
            image: 'a',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            volumeMounts: [{ name: 'work', mountPath: '/w' }],
          },
          { name: 'barrier', image: 'a' },
        ],
      },
    };
    const patch = parse(`
spec:
  containers:
    - name: k6
      image: b
      env: [{name: B, value: "3"}, {name: C, value: "4"}]
      volumeMounts: [{name: data, mountPath: /data, readOnly: true}]
      envFrom: [{configMapRef: {name: settings}}]
`);
    const merged = merge(base, patch) as { spec: { containers: Record<string, Json>[] } };
    expect(merged.spec.containers.map((c) => c.name)).toEqual(['k6', 'barrier']);
    const k6 = merged.spec.containers[0]!;
    expect(k6.image).toBe('b');
    // The patch's B and C in its order; A, which came before B, stays before it.
    expect(k6.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '3' },
      { name: 'C', value: '4' },
    ]);
    // A patched element that came first on the server brings the later server-only ones after it.
    const order = merge(
      { spec: { volumes: [{ name: 'x' }, { name: 'y' }] } },
      { spec: { volumes: [{ name: 'y', emptyDir: {} }, { name: 'z' }] } },
    );
    expect(order).toEqual({ spec: { volumes: [{ name: 'x' }, { name: 'y', emptyDir: {} }, { name: 'z' }] } });
    expect(k6.volumeMounts).toEqual([
      { name: 'data', mountPath: '/data', readOnly: true },
      { name: 'work', mountPath: '/w' },
    ]);
    expect(k6.envFrom).toEqual([{ configMapRef: { name: 'settings' } }]);
    expect(merged.spec.containers[1]).toEqual({ name: 'barrier', image: 'a' });
  });

  it('replaces lists without a merge key whole: tolerations, envFrom, command', () => {
    // The doc's second example: tolerations have no patch strategy, so the patch's list wins.
    const base = {
      spec: {
        tolerations: [{ key: 'a', operator: 'Exists' }],
        containers: [{ name: 'c', command: ['x', 'y'] }],
      },
    };
    const patch = {
      spec: { tolerations: [{ key: 'b', operator: 'Exists' }], containers: [{ name: 'c', command: ['z'] }] },
    };
    expect(merge(base, patch)).toEqual({
      spec: { tolerations: [{ key: 'b', operator: 'Exists' }], containers: [{ name: 'c', command: ['z'] }] },
    });
  });

  it('merges maps key by key (affinity, labels), and null deletes a key', () => {
    const base = {
      metadata: { labels: { a: '1', b: '2' } },
      spec: { automountServiceAccountToken: false, affinity: { podAntiAffinity: { x: 1 } } },
    };
    const patch = {
      metadata: { labels: { b: null, c: '3' } },
      spec: { automountServiceAccountToken: null, affinity: { nodeAffinity: { y: 2 } } },
    };
    expect(merge(base, patch)).toEqual({
      metadata: { labels: { a: '1', c: '3' } },
      spec: { affinity: { podAntiAffinity: { x: 1 }, nodeAffinity: { y: 2 } } },
    });
  });

  it('honours $patch: delete on a list element and on a map, and $patch: replace on a list and on a map', () => {
    const base = {
      spec: {
        volumes: [
          { name: 'a', emptyDir: {} },
          { name: 'b', emptyDir: {} },
        ],
        securityContext: { runAsUser: 1, fsGroup: 2 },
        topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 1 }],
      },
    };
    const patch = {
      spec: {
        volumes: [{ name: 'a', $patch: 'delete' }],
        securityContext: { $patch: 'replace', runAsUser: 5 },
        topologySpreadConstraints: [{ $patch: 'replace' }, { topologyKey: 'host', maxSkew: 2 }],
      },
    };
    expect(merge(base, patch)).toEqual({
      spec: {
        volumes: [{ name: 'b', emptyDir: {} }],
        securityContext: { runAsUser: 5 },
        topologySpreadConstraints: [{ topologyKey: 'host', maxSkew: 2 }],
      },
    });
    expect(merge(base, { spec: { securityContext: { $patch: 'delete' } } })).toEqual({
      spec: { volumes: base.spec.volumes, topologySpreadConstraints: base.spec.topologySpreadConstraints },
    });
  });

  it('keeps only $retainKeys after the merge (a volume changing its source)', () => {
    const base = { spec: { volumes: [{ name: 'data', emptyDir: {} }] } };
    const patch = {
      spec: { volumes: [{ name: 'data', configMap: { name: 'cm' }, $retainKeys: ['name', 'configMap'] }] },
    };
    expect(merge(base, patch)).toEqual({ spec: { volumes: [{ name: 'data', configMap: { name: 'cm' } }] } });
  });

  it('leaves the base as it was', () => {
    const base = { spec: { containers: [{ name: 'k6', env: [{ name: 'A', value: '1' }] }] } };
    const copy = structuredClone(base);
    merge(base, { spec: { containers: [{ name: 'k6', env: [{ name: 'A', value: '2' }] }] } });
    expect(base).toEqual(copy);
  });

  it.each([
    [
      { spec: { containers: [{ image: 'x' }] } },
      'spec.containers[0]: has no name (the merge key of containers)',
    ],
    [{ spec: { containers: { name: 'x' } } }, undefined],
    [{ spec: { $patch: 'remove' } }, 'spec: $patch: "remove" is not one of replace, delete, merge'],
    [
      { spec: { '$setElementOrder/containers': [{ name: 'k6' }] } },
      'spec: the directive $setElementOrder/containers is not supported',
    ],
    [
      { spec: { tolerations: [{ $patch: 'delete', key: 'a' }] } },
      'spec.tolerations[0]: $patch is not allowed here',
    ],
    [
      { spec: { volumes: [{ name: 'a', $patch: 'delete', emptyDir: {} }] } },
      'spec.volumes[a]: $patch: delete takes only the merge key',
    ],
    [
      { spec: { volumes: [{ name: 'a', $retainKeys: 'name' }] } },
      '$retainKeys must be a list of field names',
    ],
  ])('refuses %j as Kubernetes would, naming the field', (patch, message) => {
    const run = () => merge({ spec: { containers: [{ name: 'k6' }] } }, patch as Json);
    if (message === undefined) {
      // A map where a list is: replaced like any value (Kubernetes' own decoder then refuses it).
      expect(run()).toEqual({ spec: { containers: { name: 'x' } } });
      return;
    }
    expect(run).toThrow(message);
  });
});
