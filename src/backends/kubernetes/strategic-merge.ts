/**
 * Kubernetes' strategic merge patch, on plain JSON values, as `kubectl patch --type strategic` and
 * the API server apply it (k8s.io/apimachinery `pkg/util/strategicpatch`; the rules:
 * https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/ and
 * https://github.com/kubernetes/community/blob/master/contributors/devel/sig-api-machinery/strategic-merge-patch.md).
 * No maintained npm package implements it, so this is the subset an object's own fields need:
 * - maps merge key by key; `null` deletes a key; `$patch: replace` replaces the map by the patch's;
 *   `$patch: delete` deletes it; `$retainKeys: [a, b]` keeps only those keys after the merge;
 * - a list whose field has a patch merge key (the `patchMergeKey` tag of k8s.io/api, given here by
 *   `mergeKeyOf`) merges element by element on that key: an element of the patch merges into the
 *   element with the same key, or is added; `{<key>: x, $patch: delete}` deletes that element;
 *   `{$patch: replace}` in the list replaces the list by the patch's other elements. The order is
 *   Kubernetes' (`mergeSortedSlice`): the patch's elements in the patch's order, the others each
 *   put back before the first patched element that followed it, and elements that are new first;
 * - every other list is replaced whole, as are scalars.
 * `$setElementOrder/…` and `$deleteFromPrimitiveList/…` (written by kubectl's computed patches,
 * not by hand) are refused.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** Where a merge or a patch went wrong: `path` is the field, e.g. `spec.containers[k6].env`. */
export class PatchError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path || '(top)'}: ${message}`);
    this.path = path;
  }
}

/**
 * The patch merge key of the list at `fields` (field names from the root, without list
 * positions: `['spec', 'containers', 'env']`), or undefined for a list that is replaced whole.
 */
export type MergeKeyOf = (fields: readonly string[]) => string | undefined;

/** Whether `value` is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const DIRECTIVES = new Set(['$patch', '$retainKeys']);

/**
 * `patch` applied to `base` (neither is changed).
 * @throws PatchError naming the field of a patch Kubernetes would refuse: an unknown `$patch`
 *   value or directive, an element of a merged list without its merge key, a list where a map is.
 */
export function strategicMerge(
  base: Json | undefined,
  patch: Json,
  mergeKeyOf: MergeKeyOf,
): Json | undefined {
  return mergeValue(base, patch, [], '', mergeKeyOf);
}

function mergeValue(
  base: Json | undefined,
  patch: Json,
  fields: string[],
  path: string,
  keyOf: MergeKeyOf,
): Json | undefined {
  if (isObject(patch)) return mergeMap(isObject(base) ? base : undefined, patch, fields, path, keyOf);
  if (Array.isArray(patch)) {
    const key = keyOf(fields);
    return key
      ? mergeList(Array.isArray(base) ? base : [], patch, key, fields, path, keyOf)
      : plain(patch, path);
  }
  return patch;
}

/** A value of the patch as it lands in the result where nothing is merged: directives refused. */
function plain(patch: Json, path: string): Json {
  if (Array.isArray(patch)) return patch.map((v, i) => plain(v, `${path}[${i}]`));
  if (!isObject(patch)) return patch;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) throw new PatchError(path, `${k} is not allowed here`);
    if (v !== null) out[k] = plain(v, join(path, k));
  }
  return out;
}

function join(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

function mergeMap(
  base: JsonObject | undefined,
  patch: JsonObject,
  fields: string[],
  path: string,
  keyOf: MergeKeyOf,
): Json | undefined {
  for (const k of Object.keys(patch)) {
    if (k.startsWith('$') && !DIRECTIVES.has(k))
      throw new PatchError(path, `the directive ${k} is not supported (write the fields themselves)`);
  }
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive !== undefined && directive !== 'replace' && directive !== 'merge')
    throw new PatchError(path, `$patch: ${JSON.stringify(directive)} is not one of replace, delete, merge`);
  const out: JsonObject = directive === 'replace' ? {} : { ...(base ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (DIRECTIVES.has(k)) continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    const merged = mergeValue(
      directive === 'replace' ? undefined : out[k],
      v,
      [...fields, k],
      join(path, k),
      keyOf,
    );
    if (merged === undefined) delete out[k];
    else out[k] = merged;
  }
  const retain = patch.$retainKeys;
  if (retain !== undefined) {
    if (!Array.isArray(retain) || !retain.every((k) => typeof k === 'string'))
      throw new PatchError(path, '$retainKeys must be a list of field names');
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  return out;
}

function mergeList(
  base: Json[],
  patch: Json[],
  key: string,
  fields: string[],
  path: string,
  keyOf: MergeKeyOf,
): Json[] {
  const at = (item: JsonObject) => `${path}[${String(item[key])}]`;
  const elements: JsonObject[] = [];
  let replace = false;
  for (const [i, item] of patch.entries()) {
    if (!isObject(item)) throw new PatchError(`${path}[${i}]`, `each element must be a map with its ${key}`);
    if (item.$patch === 'replace' && Object.keys(item).length === 1) replace = true;
    else if (item[key] === undefined || item[key] === null)
      throw new PatchError(`${path}[${i}]`, `has no ${key} (the merge key of ${fields.at(-1)})`);
    else elements.push(item);
  }
  const same = (a: Json, b: JsonObject) => isObject(a) && a[key] === b[key];
  const original = replace ? [] : base;
  const deleted = elements.filter((e) => e.$patch === 'delete');
  const kept = original.filter((b) => !deleted.some((d) => same(b, d)));
  const patched: Json[] = [];
  for (const item of elements) {
    if (item.$patch === 'delete') {
      if (Object.keys(item).some((k) => k !== key && k !== '$patch'))
        throw new PatchError(at(item), '$patch: delete takes only the merge key');
      continue;
    }
    const found = kept.find((b) => same(b, item));
    const merged = mergeValue(found, item, fields, at(item), keyOf);
    if (merged !== undefined) patched.push(merged);
  }
  const serverOnly = kept.filter((b) => !patched.some((p) => isObject(p) && same(b, p)));
  return mergeSorted(serverOnly, patched, original, key);
}

/**
 * Kubernetes' `mergeSortedSlice`: `patched` in its order, each of `serverOnly` (in the original's
 * order) put before the first patched element that comes after it in `original`; an element found
 * in only one of them does not move the other's.
 */
function mergeSorted(serverOnly: Json[], patched: Json[], original: Json[], key: string): Json[] {
  const index = (v: Json) => original.findIndex((o) => isObject(o) && isObject(v) && o[key] === v[key]);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < patched.length) {
    if (j >= patched.length) out.push(serverOnly[i++]!);
    else if (i >= serverOnly.length) out.push(patched[j++]!);
    else {
      const li = index(serverOnly[i]!);
      const ri = index(patched[j]!);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]!);
      else out.push(patched[j++]!);
    }
  }
  return out;
}
