import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REQUIRED_PERMISSIONS, ruleGrants } from '../../../../src/backends/kubernetes/permissions.ts';

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
    // Read back as a SelfSubjectRulesReview gives them, the rules grant every permission.
    for (const p of REQUIRED_PERMISSIONS)
      expect(
        role.rules!.some((r) => ruleGrants(r, p)),
        JSON.stringify(p),
      ).toBe(true);
  });
});

describe('a rule of a SelfSubjectRulesReview, matched as RBAC matches it', () => {
  const log = { group: '', resource: 'pods', subresource: 'log', verb: 'get' };
  const watchJobs = { group: 'batch', resource: 'jobs', verb: 'watch' };
  it('grants by exact name or a wildcard, a subresource only by its own name or */sub', () => {
    expect(ruleGrants({ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }, log)).toBe(true);
    expect(ruleGrants({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, log)).toBe(true);
    expect(ruleGrants({ apiGroups: [''], resources: ['*/log'], verbs: ['get'] }, log)).toBe(true);
    expect(ruleGrants({ apiGroups: ['batch'], resources: ['jobs'], verbs: ['*'] }, watchJobs)).toBe(true);
  });
  it('does not grant what RBAC would refuse', () => {
    // `pods` is not `pods/log`, and RBAC has no `pods/*`.
    expect(ruleGrants({ apiGroups: [''], resources: ['pods'], verbs: ['get'] }, log)).toBe(false);
    expect(ruleGrants({ apiGroups: [''], resources: ['pods/*'], verbs: ['get'] }, log)).toBe(false);
    expect(ruleGrants({ apiGroups: [''], resources: ['pods/log'], verbs: ['list'] }, log)).toBe(false);
    // The core group is not batch.
    expect(ruleGrants({ apiGroups: [''], resources: ['jobs'], verbs: ['watch'] }, watchJobs)).toBe(false);
    // A rule for some names covers not every object.
    expect(
      ruleGrants(
        { apiGroups: ['batch'], resources: ['jobs'], verbs: ['watch'], resourceNames: ['a'] },
        watchJobs,
      ),
    ).toBe(false);
  });
});
