import type { RunEnvironment } from '../result/schema.ts';

/** One way the baseline's environment differs from head's, e.g. `runners: 4 -> 8`. */
export interface EnvironmentDifference {
  field: keyof RunEnvironment;
  base: string;
  head: string;
}

const ENVIRONMENT_FIELDS: Array<keyof RunEnvironment> = [
  'backend',
  'runners',
  'runnerImage',
  'resources',
  'nodeSelector',
  'scriptHash',
  'k6Version',
];

/** A value as stable text: objects with sorted keys, `—` for absent. */
function stable(value: unknown): string {
  if (value === undefined || value === null) return '—';
  if (typeof value !== 'object') return String(value);
  const sort = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, x]) => [k, sort(x)]),
        )
      : v;
  return JSON.stringify(sort(value));
}

/**
 * What differs between the environments of two runs (backend, runners, runner image, resources,
 * node selector, script hash, k6 version). Results from different environments are shown but not
 * judged: more runners or another image move RPS and latency for reasons other than the change.
 */
export function environmentDifferences(base: RunEnvironment, head: RunEnvironment): EnvironmentDifference[] {
  const diffs: EnvironmentDifference[] = [];
  for (const field of ENVIRONMENT_FIELDS) {
    const b = stable(base[field]);
    const h = stable(head[field]);
    if (b !== h) diffs.push({ field, base: b, head: h });
  }
  return diffs;
}
