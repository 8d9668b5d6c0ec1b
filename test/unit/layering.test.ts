import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The layering rule of docs/architecture.md, held by reading every import under src/: a file
 * imports only files of its own layer or of a lower one, and no two files import each other,
 * directly or round a longer cycle. Contracts (the plan, the result schema, the Kubernetes
 * options) are leaves at the bottom, so every arrow points down to them.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Layers from the bottom up. A path ending in `/` is a folder (every file under it); a more
 * specific entry wins over a folder, so a contract file inside a folder can sit lower than its
 * folder.
 */
const LAYERS: readonly (readonly string[])[] = [
  // 0. Leaves: the contracts and the cross-cutting facts. They import nothing of ours but each other.
  [
    'src/result/schema.ts',
    'src/result/timeline-schema.ts',
    'src/result/ab-schema.ts',
    'src/result/zone-schema.ts',
    'src/log.ts',
    'src/clock.ts',
    'src/output-file.ts',
  ],
  // 1. Failure kinds and exit codes, the plan contract, the quantile math.
  ['src/errors.ts', 'src/plan.ts', 'src/result/quantiles.ts', 'src/result/tail-quantile.ts'],
  // 2. Facts about k6. (And the math over k6's native histograms, per interval, with the lines
  //    that carry its deltas: the Kubernetes backend's receiver in each runner Pod runs it too.)
  ['src/k6/', 'src/result/interval-latency.ts', 'src/result/interval-lines.ts'],
  // 3. Input parsing, the validated config, the option types the inputs build.
  //    (The Kubernetes Pod patch is checked by the inputs: its merge, its rules and the names they
  //    use sit here too.)
  [
    'src/inputs/',
    'src/config.ts',
    'src/backends/kubernetes/options.ts',
    'src/backends/kubernetes/names.ts',
    'src/backends/kubernetes/strategic-merge.ts',
    'src/backends/kubernetes/pod-patch.ts',
  ],
  // 4. The backends (the Backend interface, local processes, Kubernetes Pods).
  ['src/backends/'],
  // 5. The aggregate and the result document.
  ['src/result/'],
  // 6. The orchestration, stage by stage.
  ['src/run/'],
  // 7. Number formatting (shared by the comparison's reasons and every renderer).
  ['src/render/format.ts'],
  // 8. The comparison with a baseline and the history.
  ['src/compare/'],
  // 9. Rendering: markdown, charts, HTML.
  ['src/render/'],
  // 10. The PR comment.
  ['src/pr-comment/'],
  // 11. GitHub's REST API.
  ['src/github/'],
  // 12. The demo target.
  ['src/demo/'],
  // 13. Entry points: the actions and the CLI.
  ['src/actions/', 'src/cli/'],
];

/** The layer of a file under src/ (the most specific entry of {@link LAYERS} that holds it). */
function layerOf(file: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((entries, layer) => {
    for (const entry of entries) {
      const holds = entry.endsWith('/') ? file.startsWith(entry) : file === entry;
      if (holds && entry.length > bestLength) {
        best = layer;
        bestLength = entry.length;
      }
    }
  });
  if (best < 0) throw new Error(`${file} is in no layer: add it to LAYERS in test/unit/layering.test.ts`);
  return best;
}

/** The relative imports of a TypeScript source (static `from`, `import '…'` and `import('…')`). */
function importsOf(source: string): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(
    /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm,
  )) {
    found.add(m[1]!);
  }
  return [...found];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.posix.join(dir, f.split(path.sep).join('/')))
    .sort();
}

/** Every file under src/ with the src/ files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles('src')) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const targets = importsOf(text)
      .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)))
      .filter((t) => t.startsWith('src/'));
    graph.set(file, targets);
  }
  return graph;
}

/** Imports that point up: `from -> to (layer a -> layer b)`. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const [a, b] = [layerOf(from), layerOf(to)];
      if (b > a) out.push(`${from} -> ${to} (layer ${a} imports layer ${b})`);
    }
  }
  return out;
}

/**
 * Import cycles: one line per group of files that import each other round a cycle (a strongly
 * connected component of the import graph), `cycle among N files: a, b, …`, in path order.
 */
function importCycles(graph: Map<string, string[]>): string[] {
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop)
        cycles.push(`cycle among ${component.length} files: ${component.sort().join(', ')}`);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('layering (docs/architecture.md)', () => {
  const graph = importGraph();

  it('puts every file under src/ in a layer', () => {
    for (const file of graph.keys()) expect(() => layerOf(file), file).not.toThrow();
  });

  it('has no import that points to a higher layer', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  // The result contract is split in files (the timeline's shape is its own leaf), so a contract may
  // import another contract, and nothing else of ours.
  it('keeps the contracts as leaves: the result schema, the log and the clock import no other layer', () => {
    for (const leaf of LAYERS[0]!) {
      expect(
        (graph.get(leaf) ?? []).filter((dep) => !LAYERS[0]!.includes(dep)),
        leaf,
      ).toEqual([]);
    }
  });

  it('catches an upward import and a cycle (the check itself can fail)', () => {
    const planted = new Map(graph);
    planted.set('src/result/schema.ts', ['src/run/index.ts']);
    planted.set('src/compare/compare.ts', ['src/compare/noise.ts']);
    planted.set('src/compare/noise.ts', ['src/compare/compare.ts']);
    expect(upwardImports(planted)).toContain(
      'src/result/schema.ts -> src/run/index.ts (layer 0 imports layer 6)',
    );
    expect(importCycles(planted)).toContainEqual(expect.stringContaining('src/compare/compare.ts'));
  });
});
