import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type ActionName,
  acceptedValues,
  checkWith,
  dig,
  findUses,
  type InputSpec,
  ourRef,
  PLACEHOLDER,
  parseYaml,
  REUSABLE_WORKFLOW,
  ROOT,
  readAction,
  readYaml,
} from './support/actions.ts';
import { codeBlocks, codeNames, relativeLinks, section, sections, slug, tables } from './support/markdown.ts';

// The README and docs/ against the actions they describe: one table of inputs and one of outputs
// per action, in one fixed place each, that lists exactly the action.yml's names with their
// defaults; every YAML example that uses our actions passes only inputs they have; every relative
// link resolves.

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const README = read('README.md');
const DOCS = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'examples/README.md',
];

/** Where each action's tables are: a README section, and its `#### Inputs` / `#### Outputs`. */
const PLACES: Record<ActionName, string> = {
  root: 'The root action',
  run: 'The run action',
  report: 'The report action',
};

/** Rows of the tables under a `####` heading of a section (several tables count as one). */
function rowsUnder(body: string, heading: string): string[][] {
  const sub = sections(body).find((s) => s.level === 4 && s.title === heading);
  if (!sub) throw new Error(`no "#### ${heading}"`);
  return tables(sub.body).flatMap((t) => t.slice(1));
}

/** How a default appears in a table: `1`, `kubernetes`; `${{ github.token }}` as `github.token`. */
function shownDefault(value: InputSpec['default']): string | undefined {
  if (value === undefined || value === '') return undefined;
  const text = String(value);
  return /^\$\{\{\s*(.+?)\s*\}\}$/.exec(text)?.[1] ?? text;
}

/** Problems of one inputs table against the inputs it documents. */
function inputsTableProblems(rows: string[][], inputs: Record<string, InputSpec>): string[] {
  const problems: string[] = [];
  const listed = new Map<string, string>();
  for (const row of rows) for (const name of codeNames(row[0]!)) listed.set(name, row.at(-1)!);
  for (const name of listed.keys())
    if (!(name in inputs)) problems.push(`${name}: listed, but no such input`);
  for (const [name, spec] of Object.entries(inputs)) {
    const cell = listed.get(name);
    if (cell === undefined) {
      problems.push(`${name}: not listed`);
      continue;
    }
    const def = shownDefault(spec.default);
    if (spec.required && def === undefined) {
      if (cell !== 'required') problems.push(`${name}: required, the table says "${cell}"`);
    } else if (def !== undefined && !codeNames(cell).includes(def)) {
      problems.push(`${name}: the default is \`${def}\`, the table says "${cell}"`);
    } else if (cell === '') problems.push(`${name}: no default given`);
  }
  return problems;
}

describe('README: the tables of every action, in one fixed place each', () => {
  describe.each(Object.entries(PLACES) as Array<[ActionName, string]>)('%s (section "%s")', (name, title) => {
    const body = section(README, title, 2).body;

    it('lists every input of action.yml, no other, with its default', () => {
      expect(inputsTableProblems(rowsUnder(body, 'Inputs'), readAction(name).inputs)).toEqual([]);
    });

    it('lists every output of action.yml, and no other', () => {
      const listed = rowsUnder(body, 'Outputs').flatMap((row) => codeNames(row[0]!));
      expect([...listed].sort()).toEqual(Object.keys(readAction(name).outputs).sort());
    });
  });

  it('the reusable workflow’s inputs, in docs/workflows.md, match its workflow_call', () => {
    const inputs = dig(readYaml(REUSABLE_WORKFLOW), 'on.workflow_call.inputs') as Record<string, InputSpec>;
    const body = section(read('docs/workflows.md'), 'Inputs of the reusable workflow').body;
    expect(inputsTableProblems(tables(body)[0]!.slice(1), inputs)).toEqual([]);
  });
});

describe('README: set up', () => {
  it('has exactly its two commands', () => {
    const blocks = codeBlocks(section(README, 'Set up', 2).body).map((b) => b.code.trim());
    expect(blocks).toEqual(['npm install && npm run demo', 'npm install && npm test']);
  });
});

describe.each(DOCS)('%s', (file) => {
  const md = read(file);
  const yamlBlocks = codeBlocks(md).filter((b) => b.lang === 'yaml' || b.lang === 'yml');

  it('has YAML examples that parse, and use our actions only with the inputs they have', () => {
    const problems: string[] = [];
    for (const block of yamlBlocks) {
      const where = `${file}:${block.line}`;
      const tree = parseYaml(block.code, where);
      for (const use of findUses(tree)) {
        const ref = ourRef(use.uses);
        if (!ref) continue;
        if (ref.owner !== undefined && ref.owner !== PLACEHOLDER) problems.push(`${where}: ${use.uses}`);
        if (ref.kind === 'action') {
          problems.push(...checkWith(readAction(ref.action).inputs, use).map((p) => `${where}: ${p}`));
          const refused = acceptedValues(ref.action, use);
          if (refused) problems.push(`${where}: ${refused}`);
        } else {
          const call = dig(readYaml(ref.file), 'on.workflow_call') as {
            inputs: Record<string, InputSpec>;
            secrets: Record<string, unknown>;
          };
          problems.push(...checkWith(call.inputs, use).map((p) => `${where}: ${p}`));
          for (const secret of Object.keys((use.secrets as object | undefined) ?? {}))
            if (!(secret in call.secrets))
              problems.push(`${where}: secrets.${secret} is not a secret of ${ref.file}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it(`names our actions ${PLACEHOLDER} only`, () => {
    const others = [...md.matchAll(/([\w.-]+)\/k6-distributed(?=[/@])/g)].map((m) => m[0]);
    expect(others.filter((o) => o !== PLACEHOLDER)).toEqual([]);
  });

  it('has relative links that resolve, anchors included', () => {
    const broken: string[] = [];
    for (const link of relativeLinks(md)) {
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const linked = target ? path.normalize(path.join(path.dirname(file), target)) : file;
      if (!existsSync(path.join(ROOT, linked))) {
        broken.push(link);
        continue;
      }
      if (anchor && linked.endsWith('.md')) {
        const anchors = sections(read(linked)).map((s) => slug(s.title));
        if (!anchors.includes(anchor)) broken.push(link);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('docs/ covers what the issue asks', () => {
  it('troubleshooting: the k6 errors at scale, unschedulable runners, missing RBAC, fork PRs', () => {
    const md = read('docs/troubleshooting.md');
    for (const text of [
      'connection reset by peer',
      'context deadline exceeded',
      'i/o timeout',
      'too many open files',
      'could not be placed',
      'permissions: the credentials lack',
      'fork',
    ])
      expect(md, text).toContain(text);
  });

  it('the README links every docs page and every ready-to-copy workflow', () => {
    const links = relativeLinks(README);
    for (const f of readdirSync(path.join(ROOT, 'docs'))) expect(links, f).toContain(`docs/${f}`);
    for (const f of readdirSync(path.join(ROOT, 'workflows'))) expect(links, f).toContain(`workflows/${f}`);
  });

  it('docs/architecture.md links every file under src/ (a new file gets its place in the map)', () => {
    const links = new Set(
      relativeLinks(read('docs/architecture.md')).map((l) => path.posix.normalize(`docs/${l}`)),
    );
    const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `src/${f.split(path.sep).join('/')}`);
    expect(files.filter((f) => !links.has(f))).toEqual([]);
  });

  it('examples/README.md lists every file of examples/', () => {
    const listed = tables(read('examples/README.md')).flatMap((t) =>
      t.slice(1).flatMap((r) => codeNames(r[0]!)),
    );
    const files = readdirSync(path.join(ROOT, 'examples')).filter((f) => f !== 'README.md');
    expect(listed.sort()).toEqual(files.sort());
  });

  it('the reusable workflow is documented with the file GitHub calls', () => {
    expect(read('docs/workflows.md')).toContain(`${PLACEHOLDER}/${REUSABLE_WORKFLOW}@v1`);
  });
});
