import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll } from 'vitest';
import { readRunResult } from '../../src/result/read-result.ts';
import type { RunResult } from '../../src/result/schema.ts';
import { type CliRun, k6ProcessesUnder, leftovers, startCli, tempDir, writeScript } from '../support/cli.ts';
import { type FaultCase, type FaultOutcome, faultTable, shellExitCode } from './table.ts';

// Every output file (the result, the markdown report, the HTML report) goes through one check
// before the load and one writer after it, with the real CLI and real k6. The full-disk rows mount
// a small tmpfs, which needs root (CI and the developers' machines are root); elsewhere they are
// left out of the table, and its count says so.

const root = process.getuid?.() === 0;
const quick = writeScript(
  `export const options = { vus: 1, iterations: 1 };\nexport default function () {}\n`,
);
const scriptText = readFileSync(quick, 'utf8');
const outDir = tempDir('k6d-outputs-');
const mounts: string[] = [];

/** A tmpfs of `size` (e.g. `8k`) at a new folder under outDir, unmounted after the file. */
function smallDisk(size: string): string {
  const dir = path.join(outDir, `disk-${mounts.length}`);
  execFileSync('mkdir', [dir]);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of mounts) execFileSync('umount', [dir]);
  rmSync(outDir, { recursive: true, force: true });
  rmSync(path.dirname(quick), { recursive: true, force: true });
  for (const f of ['json', 'html']) rmSync(`/dev/k6d-no-such-output.${f}`, { force: true });
});

async function outcome(run: CliRun, dataLost?: string): Promise<FaultOutcome> {
  return {
    code: shellExitCode(run.code, run.signal ?? null),
    stderr: run.stderr,
    leftovers: [...k6ProcessesUnder(run.tmp), ...leftovers(run.tmp).map((f) => `${run.tmp}/${f}`)],
    ...(dataLost ? { dataLost } : {}),
  };
}

/** A bad output path: refused before the load (exit 2), in one line naming the flag. */
function refused(
  name: string,
  args: () => string[],
  message: RegExp,
  check?: () => string | undefined,
): FaultCase {
  return {
    name,
    code: 2,
    message,
    run: async () => {
      const run = await startCli(args()).done;
      const ran = run.stderr.includes('started') ? 'the load ran although an output was bad' : undefined;
      return outcome(run, ran ?? check?.());
    },
  };
}

const cases: FaultCase[] = [
  refused(
    '--html naming the script is refused before the load, and the script is left as it was',
    () => ['run', quick, '--html', quick],
    /error: --html: .*script\.js is the same file as <script> /,
    () => (readFileSync(quick, 'utf8') === scriptText ? undefined : 'the k6 script was overwritten'),
  ),
  refused(
    '--html naming the same file as -o is refused before the load',
    () => ['run', quick, '-o', path.join(outDir, 'b.json'), '--html', path.join(outDir, 'b.json')],
    /error: --html: .*b\.json is the same file as --out /,
  ),
  refused(
    '--html naming the same file as --report is refused before the load',
    () => ['run', quick, '--report', path.join(outDir, 'r.html'), '--html', path.join(outDir, 'r.html')],
    /error: --html: .*r\.html is the same file as --report /,
  ),
  refused(
    '--html into a folder that does not exist is refused before the load',
    () => ['run', quick, '--html', '/nonexistent-dir/r.html'],
    /error: --html: the folder \/nonexistent-dir does not exist/,
  ),
  refused(
    '-o naming a new file in /dev is refused before the load, and nothing is made there',
    () => ['run', quick, '-o', '/dev/k6d-no-such-output.json'],
    /error: --out: \/dev\/k6d-no-such-output\.json does not exist, and no file is made in \/dev/,
    () => (existsSync('/dev/k6d-no-such-output.json') ? 'a file was made in /dev' : undefined),
  ),
  {
    name: 'a script with 35 nested groups gives a result the report action reads (no depth refusal)',
    code: 0,
    run: async () => {
      const open = Array.from({ length: 35 }, (_, i) => `group('g${i}', () => {`).join(' ');
      const script = writeScript(
        `import { group, check } from 'k6';\nexport const options = { vus: 1, iterations: 1 };\n` +
          `export default function () { ${open} check(1, { deep: () => true }); ${'});'.repeat(35)} }\n`,
        'deep.js',
      );
      const file = path.join(outDir, 'deep.json');
      const run = await startCli(['run', script, '-o', file, '--no-html']).done;
      const read = await readRunResult(file, 'result').then(
        () => undefined,
        (error: unknown) => `the report refused the CLI's own result: ${String(error)}`,
      );
      return outcome(run, read);
    },
  },
];

if (root) {
  cases.push(
    {
      // A private node of /dev/null's device (1, 3): were the write ever to rename over it again,
      // only this node would be replaced, not the machine's /dev/null.
      name: '-o naming a character device (as /dev/null) writes into it, and no HTML file appears beside it',
      code: 0,
      run: async () => {
        const device = path.join(outDir, 'null');
        execFileSync('mknod', ['-m', '666', device, 'c', '1', '3']);
        const run = await startCli(['run', quick, '-o', device]).done;
        const damage = !statSync(device).isCharacterDevice()
          ? 'the device was replaced by a regular file'
          : existsSync(`${device}.html`)
            ? `${device}.html was made beside the device`
            : undefined;
        return outcome(run, damage);
      },
    },
    {
      name: 'a result that does not fit on the disk is kept in the temp folder, and the run says where',
      code: 1,
      message: /error: --out: could not write .*r\.json: ENOSPC.*; the result was kept in \S+\.json/,
      run: async () => {
        const disk = smallDisk('4k'); // one page: the previous file fills it
        const file = path.join(disk, 'r.json');
        writeFileSync(file, 'previous');
        const run = await startCli(['run', quick, '-o', file, '--no-html']).done;
        const kept = /the result was kept in (\S+\.json)/.exec(run.stderr)?.[1];
        let lost: string | undefined;
        if (readFileSync(file, 'utf8') !== 'previous') lost = 'the previous r.json was changed';
        else if (!kept || !existsSync(kept)) lost = 'the result was not kept';
        else if ((JSON.parse(readFileSync(kept, 'utf8')) as RunResult).runners.length !== 1)
          lost = 'the kept result is not the run';
        // The kept result is the one file the run means to leave; the case takes it away.
        if (kept) rmSync(kept, { force: true });
        return outcome(run, lost);
      },
    },
    {
      name: 'an HTML report that does not fit fails the run in one line naming --html, the previous one intact',
      code: 1,
      message: /error: --html: could not write .*r\.html: ENOSPC.*; the result is in /,
      run: async () => {
        const disk = smallDisk('64k');
        const html = path.join(disk, 'r.html');
        writeFileSync(html, '<p>previous</p>');
        const run = await startCli(['run', quick, '-o', path.join(outDir, 'fits.json'), '--html', html]).done;
        const lost =
          readFileSync(html, 'utf8') !== '<p>previous</p>'
            ? 'the previous HTML report was changed'
            : run.result
              ? undefined
              : 'no result written';
        return outcome(run, lost);
      },
    },
  );
}

faultTable('local output files', cases);
