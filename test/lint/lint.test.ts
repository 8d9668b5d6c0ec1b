import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYaml, ROOT } from '../docs/support/actions.ts';
import { type Snippet, withLocalActions, workflowSnippets } from './support/snippets.ts';

// actionlint (with a pinned shellcheck for the `run:` scripts) and zizmor, at the versions
// scripts/ensure-lint.sh pins, over every workflow, every action.yml and every GitHub Actions
// example of the README and docs/, as a user who copies them would run them. Any finding fails.
// The settings they read are .github/actionlint.yaml and .github/zizmor.yml (each exception there
// says why).

const WORKFLOWS = ['workflows', '.github/workflows'].flatMap((dir) =>
  readdirSync(path.join(ROOT, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => `${dir}/${f}`),
);
const ACTIONS = ['action.yml', 'actions/run/action.yml', 'actions/report/action.yml'];
const DOCS = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);
const SNIPPETS: Snippet[] = DOCS.flatMap(workflowSnippets);

let tools: { actionlint: string; shellcheck: string; zizmor: string };
let scratch: string;

beforeAll(() => {
  // Installs them into ~/.cache/k6-distributed on first use (about 30 s), then only finds them.
  const out = execFileSync('bash', [path.join(ROOT, 'scripts/ensure-lint.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  tools = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => /^(\w+)=(.+)$/.exec(line))
      .filter((m) => m !== null)
      .map((m) => [m[1], m[2]]),
  ) as typeof tools;
  scratch = mkdtempSync(path.join(tmpdir(), 'k6d-lint-'));
});

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

interface ActionlintError {
  message: string;
  filepath: string;
  line: number;
  column: number;
  kind: string;
}

/** actionlint's findings on files of a project directory, as `file:line:col: message [kind]`. */
function actionlint(cwd: string, files: string[], config: string): string[] {
  const r = spawnSync(
    tools.actionlint,
    [
      '-format',
      '{{json .}}',
      '-config-file',
      config,
      '-shellcheck',
      tools.shellcheck,
      '-pyflakes=',
      ...files,
    ],
    { cwd, encoding: 'utf8' },
  );
  if (r.status !== 0 && r.status !== 1) throw new Error(`actionlint failed (${r.status}): ${r.stderr}`);
  const errors = JSON.parse(r.stdout || '[]') as ActionlintError[];
  return errors.map((e) => `${e.filepath}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
}

interface ZizmorFinding {
  ident: string;
  desc: string;
  determinations: { severity: string };
  locations: Array<{
    symbolic: {
      key: { Local?: { verbatim_path?: string; given_path?: string } };
      annotation: string;
      kind: string;
    };
    concrete: { location: { start_point: { row: number } } };
  }>;
}

/** zizmor's findings (offline audits) in a persona, as `file:line: audit: annotation`. */
function zizmor(files: string[], persona: 'regular' | 'pedantic' | 'auditor'): string[] {
  const r = spawnSync(
    tools.zizmor,
    [
      '--offline',
      '--no-progress',
      '--format',
      'json',
      '--config',
      path.join(ROOT, '.github/zizmor.yml'),
      '--persona',
      persona,
      ...files,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (r.stdout.trim() === '') throw new Error(`zizmor failed (${r.status}): ${r.stderr}`);
  const findings = JSON.parse(r.stdout) as ZizmorFinding[];
  return findings.map((f) => {
    const at = f.locations.find((l) => l.symbolic.kind === 'Primary') ?? f.locations[0]!;
    const local = at.symbolic.key.Local;
    const file = local?.verbatim_path ?? local?.given_path ?? '?';
    return `${file}:${at.concrete.location.start_point.row + 1}: ${f.ident} (${f.determinations.severity}): ${f.desc}; ${at.symbolic.annotation}`;
  });
}

describe('the docs have GitHub Actions examples to check', () => {
  it('finds the README quick starts and the reusable workflow calls', () => {
    expect(SNIPPETS.filter((s) => s.where.startsWith('README.md')).length).toBeGreaterThanOrEqual(3);
    expect(SNIPPETS.some((s) => s.workflow.includes('.github/workflows/k6-distributed.yml'))).toBe(true);
  });
});

describe('the action.yml files as the Marketplace reads them', () => {
  it('have descriptions under 125 characters and names in one style', () => {
    for (const file of ACTIONS) {
      const meta = parseYaml<{ name: string; description: string }>(
        readFileSync(path.join(ROOT, file), 'utf8'),
        file,
      );
      expect(meta.description.length, file).toBeLessThan(125);
      expect(meta.name, file).toMatch(/^k6-distributed( [a-z]+)?$/);
    }
  });
});

describe('the checks can fail', () => {
  it('actionlint reports an input our action lacks, zizmor a pull request title in a shell', () => {
    const dir = path.join(scratch, 'bad');
    mkdirSync(path.join(dir, '.github/workflows'), { recursive: true });
    mkdirSync(path.join(dir, '.git'));
    cpSync(path.join(ROOT, 'action.yml'), path.join(dir, 'action.yml'));
    const file = '.github/workflows/bad.yml';
    writeFileSync(
      path.join(dir, file),
      [
        'name: bad',
        'on: pull_request',
        'permissions: {}',
        'jobs:',
        '  bad:',
        '    name: bad',
        '    runs-on: ubuntu-latest',
        '    steps:',
        `      - run: echo "\${{ github.event.pull_request.title }}"`,
        '      - uses: ./',
        '        with: { script: a.js, runner: 4 }',
        '',
      ].join('\n'),
    );
    const emptyConfig = path.join(dir, 'actionlint.yaml');
    writeFileSync(emptyConfig, '{}\n');
    expect(actionlint(dir, [file], emptyConfig).join('\n')).toContain('input "runner" is not defined');
    expect(zizmor([path.join(dir, file)], 'regular').join('\n')).toContain('template-injection');
  });
});

describe('actionlint', () => {
  it('finds nothing in the workflows, as they are', () => {
    expect(actionlint(ROOT, WORKFLOWS, path.join(ROOT, '.github/actionlint.yaml'))).toEqual([]);
  });

  // In a copy of the repository whose workflows and examples name our actions as local ones,
  // actionlint also reads our action.yml files and the reusable workflow, and checks each `with:`
  // (unknown inputs, required ones missing) and each call's inputs and secrets against them.
  it('finds nothing in the workflows and docs examples with our actions as local ones', () => {
    const copy = path.join(scratch, 'local');
    mkdirSync(path.join(copy, '.github/workflows'), { recursive: true });
    mkdirSync(path.join(copy, '.git'));
    for (const file of ACTIONS) cpSync(path.join(ROOT, file), path.join(copy, file));
    cpSync(path.join(ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true }); // runs.main, runs.post
    const files: string[] = [];
    const where = new Map<string, string>();
    const put = (name: string, text: string, origin: string) => {
      const file = `.github/workflows/${name}`;
      writeFileSync(path.join(copy, file), withLocalActions(text));
      files.push(file);
      where.set(file, origin);
    };
    for (const file of WORKFLOWS) put(path.basename(file), readFileSync(path.join(ROOT, file), 'utf8'), file);
    for (const s of SNIPPETS) put(s.file, s.workflow, s.where);
    // The reusable workflow keeps its name: the examples call it by it.
    const emptyConfig = path.join(scratch, 'actionlint.yaml');
    writeFileSync(emptyConfig, '{}\n');
    const found = actionlint(copy, files, emptyConfig).map((f) => {
      const file = f.slice(0, f.indexOf(':'));
      return `${where.get(file) ?? file} (as ${f})`;
    });
    expect(found).toEqual([]);
  });
});

// Every persona: the default one, pedantic (code smells: undocumented permissions, no concurrency
// limit) and auditor (also secrets outside an environment). Every finding is fixed, or ignored
// where it is with the reason, in the project's files and in the docs examples a user copies.
const PERSONAS = ['regular', 'pedantic', 'auditor'] as const;

describe('zizmor', () => {
  it.each(PERSONAS)('finds nothing in the workflows and action.yml files (%s)', (persona) => {
    expect(zizmor([...WORKFLOWS, ...ACTIONS], persona)).toEqual([]);
  });

  it.each(PERSONAS)('finds nothing in the docs examples, completed into workflows (%s)', (persona) => {
    const dir = path.join(scratch, `snippets-${persona}`);
    mkdirSync(dir, { recursive: true });
    const files = SNIPPETS.map((s) => {
      const file = path.join(dir, s.file);
      writeFileSync(file, s.workflow);
      return file;
    });
    const found = zizmor(files, persona).map((f) => {
      const snippet = SNIPPETS.find((s) => f.startsWith(`${path.join(dir, s.file)}:`));
      // The line is one of the completed workflow's; the example's own line is the useful one.
      return snippet ? `${snippet.where}: ${f.replace(/^[^:]*:\d+: /, '')}` : f;
    });
    expect(found).toEqual([]);
  });
});
