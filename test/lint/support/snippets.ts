import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PLACEHOLDER, parseYaml, ROOT } from '../../docs/support/actions.ts';
import { codeBlocks } from '../../docs/support/markdown.ts';

/** A YAML example of the docs made into a whole workflow, as a user who copies it would have it. */
export interface Snippet {
  /** Where the example starts (`README.md:57`). */
  where: string;
  /** A file name for it (`README.md-57.yml`). */
  file: string;
  /** The workflow's text. */
  workflow: string;
}

type Tree = Record<string, unknown>;

const isSteps = (v: unknown): v is Tree[] =>
  Array.isArray(v) &&
  v.length > 0 &&
  v.every((s) => s && typeof s === 'object' && ('uses' in s || 'run' in s));

/**
 * The GitHub Actions examples in a Markdown file, each completed into a workflow: a list of steps
 * (or a mapping with `steps:`) becomes the steps of one job that may read the repository; a
 * `jobs:` mapping gets a name and triggers; a whole workflow stays as it is. Other YAML (Kubernetes
 * manifests, inputs of one step, …) is not a workflow and is left out.
 *
 * The example's own text is kept, comments included (a permission's reason, a zizmor ignore with
 * its reason): the completion only adds lines around it.
 */
export function workflowSnippets(markdownFile: string): Snippet[] {
  const md = readFileSync(path.join(ROOT, markdownFile), 'utf8');
  const out: Snippet[] = [];
  for (const block of codeBlocks(md)) {
    if (block.lang !== 'yaml' && block.lang !== 'yml') continue;
    const where = `${markdownFile}:${block.line}`;
    const workflow = asWorkflow(parseYaml<unknown>(block.code, where), block.code, where);
    if (workflow === undefined) continue;
    // The completed text must mean what the example means, with only the completion added.
    parseYaml(workflow, `${where} (completed)`);
    out.push({ where, file: `${markdownFile.replace(/\//g, '-')}-${block.line}.yml`, workflow });
  }
  return out;
}

/** The text with its common indentation removed, then indented by `by` spaces. */
function reindent(code: string, by: number): string {
  const lines = code.replace(/\s+$/, '').split('\n');
  const common = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => (l.trim() === '' ? '' : ' '.repeat(by) + l.slice(common))).join('\n');
}

function asWorkflow(tree: unknown, code: string, where: string): string | undefined {
  if (!tree || typeof tree !== 'object') return undefined;
  const head = [
    `name: ${JSON.stringify(`example ${where}`)}`,
    'on:',
    '  push: { branches: [main] }',
    '  pull_request:',
    'permissions: {}',
  ];
  // The job a user pastes steps into: it reads the repository, and, as this project's workflows
  // do, runs one load test at a time on the shared target and cluster.
  const job = (has: Tree) => [
    ...(has.name === undefined ? ['    name: example'] : []),
    ...(has['runs-on'] === undefined ? ['    runs-on: ubuntu-latest'] : []),
    ...(has.permissions === undefined ? ['    permissions:', '      contents: read'] : []),
    ...(has.concurrency === undefined
      ? ['    concurrency: { group: k6-distributed-load-test, cancel-in-progress: false }']
      : []),
  ];
  const lines = (...parts: string[]) => `${parts.join('\n')}\n`;
  if (isSteps(tree))
    return lines(...head, 'jobs:', '  example:', ...job({}), '    steps:', reindent(code, 6));
  const node = tree as Tree;
  if ('apiVersion' in node || 'kind' in node) return undefined;
  if ('jobs' in node && 'on' in node) return code;
  if ('jobs' in node) return lines(...head, reindent(code, 0));
  if (isSteps(node.steps)) return lines(...head, 'jobs:', '  example:', ...job(node), reindent(code, 4));
  return undefined;
}

/**
 * The same workflow with this project's actions named as local actions (`./`, `./actions/run`,
 * `./.github/workflows/…`), so that actionlint, run in a copy of the repository, checks every
 * `with:` against our action.yml files and reusable workflow (it reads local metadata only).
 */
export function withLocalActions(workflow: string): string {
  const owner = PLACEHOLDER.replace('/', '\\/');
  return workflow
    .replace(
      new RegExp(`(uses:\\s*)${owner}(/[^@\\s]*)?@\\S+`, 'g'),
      (_m, uses: string, sub = '') => `${uses}.${sub || '/'}`,
    )
    .replace(/(uses:\s*)\$\//g, '$1./');
}
