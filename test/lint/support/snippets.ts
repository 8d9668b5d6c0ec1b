import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
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
 */
export function workflowSnippets(markdownFile: string): Snippet[] {
  const md = readFileSync(path.join(ROOT, markdownFile), 'utf8');
  const out: Snippet[] = [];
  for (const block of codeBlocks(md)) {
    if (block.lang !== 'yaml' && block.lang !== 'yml') continue;
    const where = `${markdownFile}:${block.line}`;
    const tree = parseYaml<unknown>(block.code, where);
    const workflow = asWorkflow(tree, where);
    if (!workflow) continue;
    out.push({
      where,
      file: `${markdownFile.replace(/\//g, '-')}-${block.line}.yml`,
      // A whole workflow keeps its text, comments included (a zizmor ignore with its reason).
      workflow: workflow === tree ? block.code : stringify(workflow, { lineWidth: 0 }),
    });
  }
  return out;
}

function asWorkflow(tree: unknown, where: string): Tree | undefined {
  if (!tree || typeof tree !== 'object') return undefined;
  const head = { name: `example ${where}`, on: { push: { branches: ['main'] }, pull_request: null } };
  const job = (steps: Tree[], extra: Tree = {}) => ({
    name: 'example',
    'runs-on': 'ubuntu-latest',
    permissions: { contents: 'read' },
    ...extra,
    steps,
  });
  if (isSteps(tree)) return { ...head, permissions: {}, jobs: { example: job(tree) } };
  const node = tree as Tree;
  if ('apiVersion' in node || 'kind' in node) return undefined;
  if ('jobs' in node && 'on' in node) return node;
  if ('jobs' in node) return { ...head, permissions: {}, ...node };
  if (isSteps(node.steps)) {
    const { steps, ...rest } = node;
    return { ...head, permissions: {}, jobs: { example: job(steps as Tree[], rest) } };
  }
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
