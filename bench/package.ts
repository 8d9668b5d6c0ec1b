/**
 * What a user's `npm install k6-distributed` costs, and how fast `npx k6-distributed --help`
 * answers, on each Node the package supports. Packs this working tree (`npm pack`), installs the
 * tarball into an empty folder with npm on Node 20 (the machine's), 22.19 and 24 (the same Nodes as
 * test/package/pack.test.ts, test/support/package.ts), and records the tarball's size, the bytes
 * under node_modules, the install time and five warm `npx k6-distributed --help`. Prints the figures
 * and writes bench/results/package.json and bench/results/package.md.
 *
 *   npm run bench:package                      # this working tree
 *   npm run bench:package -- --baseline <ref>  # and a commit before, from `git archive`, on Node 24
 *
 * With --baseline the old package is installed as its users got it (optional dependencies too).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { median } from '../src/compare/noise.ts';
import { installPackage, nodesUnderTest, packPackage, timeHelp } from '../test/support/package.ts';
import { removeTempDirs, tempDir } from '../test/support/temp.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const HELP_RUNS = 5;

interface Row {
  what: string;
  node: string;
  tarballBytes: number;
  installedBytes: number;
  installSeconds: number;
  helpSeconds: number[];
  helpMedianSeconds: number;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
const rows: Row[] = [];

function measure(what: string, root: string, nodes = nodesUnderTest()): void {
  const work = tempDir('k6d-bench-package-');
  const packed = packPackage(work, root);
  for (const node of nodes) {
    const installed = installPackage(packed.tarball, path.join(work, `node-${node.label}`), node.dir);
    const help = timeHelp(installed.project, node.dir, HELP_RUNS);
    const row: Row = {
      what,
      node: `${node.version} (${node.source})`,
      tarballBytes: packed.size,
      installedBytes: installed.bytes,
      installSeconds: Number(installed.seconds.toFixed(2)),
      helpSeconds: help.map((s) => Number(s.toFixed(3))),
      helpMedianSeconds: Number(median(help).toFixed(3)),
    };
    rows.push(row);
    console.log(
      `${what}, Node ${row.node}: tarball ${mb(row.tarballBytes)}, installed ${mb(row.installedBytes)} in ${row.installSeconds} s, ` +
        `npx k6-distributed --help median ${row.helpMedianSeconds} s (${row.helpSeconds.join(', ')})`,
    );
  }
}

const baselineAt = process.argv.indexOf('--baseline');
if (baselineAt >= 0) {
  const ref = process.argv[baselineAt + 1];
  if (!ref) throw new Error('--baseline needs a commit');
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: ROOT, encoding: 'utf8' }).trim();
  const tree = tempDir('k6d-bench-baseline-');
  execFileSync('bash', ['-c', `git archive ${commit} | tar -x -C ${JSON.stringify(tree)}`], { cwd: ROOT });
  measure(
    `commit ${commit}`,
    tree,
    nodesUnderTest().filter((n) => n.label === '24'),
  );
}
measure('this tree', ROOT);
removeTempDirs();

mkdirSync(RESULTS, { recursive: true });
const date = new Date().toISOString().slice(0, 10);
writeFileSync(
  path.join(RESULTS, 'package.json'),
  `${JSON.stringify({ date, helpRuns: HELP_RUNS, rows }, null, 2)}\n`,
);
writeFileSync(
  path.join(RESULTS, 'package.md'),
  [
    `# The npm package: install size and \`npx k6-distributed --help\` (${date})`,
    '',
    '`npm run bench:package`: `npm pack`, the tarball installed into an empty folder by npm on each',
    `Node, then ${HELP_RUNS} warm \`npx k6-distributed --help\` (after one that warms the disk cache), on this`,
    "machine's 2 shared cores. Targets: at most 10 MB installed, --help within 1 s warm.",
    '',
    '| package | Node | tarball | installed | install | `--help` median (runs) |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${r.node} | ${mb(r.tarballBytes)} | ${mb(r.installedBytes)} | ${r.installSeconds} s | ${r.helpMedianSeconds} s (${r.helpSeconds.join(', ')}) |`,
    ),
    '',
  ].join('\n'),
);
console.log(`written: ${path.relative(ROOT, path.join(RESULTS, 'package.md'))}`);
