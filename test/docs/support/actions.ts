import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { parseReportInputs } from '../../../src/actions/report/inputs.ts';
import { readRunInputs } from '../../../src/actions/run/inputs.ts';
import { readMainInputs } from '../../../src/actions/run-and-report/inputs.ts';

/** The repository root. */
export const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The placeholder owner/repo the workflows and docs use for this project's actions. */
export const PLACEHOLDER = 'your-org/k6-distributed';

/** Parses a YAML file strictly (as GitHub does): any syntax error fails with its line. */
export function readYaml<T = unknown>(file: string): T {
  return parseYaml<T>(readFileSync(path.resolve(ROOT, file), 'utf8'), file);
}

/** Parses YAML text strictly. */
export function parseYaml<T = unknown>(text: string, what: string): T {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new Error(`${what}: not valid YAML at line ${e.linePos?.[0]?.line}: ${e.message.split('\n')[0]}`);
  }
  return doc.toJS() as T;
}

/** An input of an action.yml or of a workflow_call / workflow_dispatch trigger. */
export interface InputSpec {
  description?: string;
  required?: boolean;
  default?: string | number | boolean;
  type?: string;
}

/** The parts of an action.yml the tests read. */
export interface ActionYml {
  name: string;
  inputs: Record<string, InputSpec>;
  outputs: Record<string, { description: string }>;
  runs: { using: string; main: string; post?: string };
}

/** This project's actions: what `uses:` names them, and their metadata file. */
export const ACTIONS = {
  root: 'action.yml',
  run: 'actions/run/action.yml',
  report: 'actions/report/action.yml',
} as const;
export type ActionName = keyof typeof ACTIONS;

/** The reusable workflow. */
export const REUSABLE_WORKFLOW = '.github/workflows/k6-distributed.yml';

/** Reads one of this project's action.yml files. */
export function readAction(name: ActionName): ActionYml {
  return readYaml<ActionYml>(ACTIONS[name]);
}

/** What a `uses:` value refers to, when it is one of ours; `owner` is the owner/repo it names. */
export type OurRef =
  | { kind: 'action'; action: ActionName; owner?: string }
  | { kind: 'workflow'; file: string; owner?: string };

/**
 * Recognises this project's actions and reusable workflow in a `uses:` value: `./`,
 * `./actions/run`, `$/` and `$/actions/report` (GitHub's self-repository reference: this
 * repository at the running commit), `OWNER/k6-distributed@v1`,
 * `OWNER/k6-distributed/actions/report@…`, `OWNER/k6-distributed/.github/workflows/k6-distributed.yml@…`.
 * `owner` is undefined for the local and self-repository forms.
 */
export function ourRef(uses: string): OurRef | undefined {
  const local = /^[.$]\/?(actions\/(run|report))?\/?$/.exec(uses);
  if (local) return { kind: 'action', action: (local[2] as ActionName | undefined) ?? 'root' };
  const self = /^\$\/(\.github\/workflows\/[\w.-]+\.ya?ml)$/.exec(uses);
  if (self) return { kind: 'workflow', file: self[1]! };
  const remote = /^([^/@\s]+\/k6-distributed)(\/[^@]*)?@(\S+)$/.exec(uses);
  if (!remote) return undefined;
  const owner = remote[1]!;
  const sub = (remote[2] ?? '').replace(/\/$/, '');
  if (sub === '') return { kind: 'action', action: 'root', owner };
  if (sub === '/actions/run') return { kind: 'action', action: 'run', owner };
  if (sub === '/actions/report') return { kind: 'action', action: 'report', owner };
  if (sub.startsWith('/.github/workflows/')) return { kind: 'workflow', file: sub.slice(1), owner };
  throw new Error(`${uses}: names no action or workflow of k6-distributed`);
}

/** A `uses:` with its `with:` (a step, or a job calling a reusable workflow), found anywhere in a YAML tree. */
export interface Use {
  uses: string;
  with: Record<string, unknown>;
  secrets?: unknown;
  /** Where in the tree (`jobs.load-test.steps.2`). */
  at: string;
}

/** Every mapping with a `uses:` string in a parsed YAML tree. */
export function findUses(tree: unknown, at = ''): Use[] {
  if (Array.isArray(tree)) return tree.flatMap((item, i) => findUses(item, at ? `${at}.${i}` : String(i)));
  if (!tree || typeof tree !== 'object') return [];
  const node = tree as Record<string, unknown>;
  const here: Use[] =
    typeof node.uses === 'string'
      ? [
          {
            uses: node.uses,
            with: (node.with as Record<string, unknown> | undefined) ?? {},
            ...(node.secrets === undefined ? {} : { secrets: node.secrets }),
            at,
          },
        ]
      : [];
  return [
    ...here,
    ...Object.entries(node).flatMap(([k, v]) => (k === 'with' ? [] : findUses(v, at ? `${at}.${k}` : k))),
  ];
}

/**
 * Problems of one use of our action: `with:` keys the action lacks, required inputs not given.
 */
export function checkWith(inputs: Record<string, InputSpec>, use: Pick<Use, 'with' | 'uses'>): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(use.with)) {
    if (!(key in inputs)) problems.push(`${use.uses}: with.${key} is not an input`);
  }
  for (const [name, spec] of Object.entries(inputs)) {
    if (spec.required && spec.default === undefined && !(name in use.with))
      problems.push(`${use.uses}: the required input ${name} is not given`);
  }
  return problems;
}

/**
 * The value as the action would see it when the workflow runs, for the inputs whose value can be
 * known here: a value that is one whole `${{ … }}` expression is unknown (undefined); expressions
 * inside a longer value become `x` (`pool=${{ inputs.node-pool }}` -> `pool=x`).
 */
export function knownValue(value: unknown): string | undefined {
  const text = typeof value === 'string' ? value : String(value);
  if (/^\s*\$\{\{[^}]*\}\}\s*$/.test(text)) return undefined;
  return text.replace(/\$\{\{[^}]*\}\}/g, 'x');
}

/** Every `${{ … }}` expression in a file's text. */
export function expressions(text: string): string[] {
  return [...text.matchAll(/\$\{\{([\s\S]*?)\}\}/g)].map((m) => m[1]!.trim());
}

/** Checks the values known before the run with the action's own input readers. */
export function acceptedValues(action: ActionName, use: Use): string | undefined {
  const inputs = readAction(action).inputs;
  // An input whose value is only known when the workflow runs takes its default, or a stand-in
  // when it is required (the stand-in for github-token is the token GitHub gives).
  const get = (name: string) =>
    (name in use.with ? knownValue(use.with[name]) : undefined) ??
    (inputs[name]?.required || name === 'github-token' ? 'x' : '');
  try {
    if (action === 'root') readMainInputs(get);
    else if (action === 'run') readRunInputs(get);
    else {
      parseReportInputs(Object.fromEntries(Object.keys(inputs).map((n) => [n, get(n)])));
    }
    return undefined;
  } catch (error) {
    return `${use.uses} at ${use.at}: ${(error as Error).message}`;
  }
}

/** The value at a dotted path of a parsed YAML tree (`spec.rules.0.match`), or undefined. */
export function dig(tree: unknown, dotted: string): unknown {
  let node = tree;
  for (const key of dotted.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
