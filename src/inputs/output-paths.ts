import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from '../errors.ts';

/**
 * Output files (the result JSON, the markdown, HTML and JUnit reports) are checked before the load starts, so that
 * a run is never made only to fail at the write and lose its data.
 */

/** One output file and the input or flag that named it (`--out`, `result-path`). */
export interface OutputPath {
  input: string;
  path: string;
}

/**
 * Checks that every output can be written: it is not a directory, its folder exists and is
 * writable (the result is written to a temporary file in it and renamed), an existing file is
 * writable, and no two outputs, nor an output and one of `inputs` (the script), name the same file.
 * An existing character device or FIFO (`/dev/null`, `/dev/stdout` on a pipe) is written in place
 * (src/output-file.ts) and may be named by several outputs; a socket or a block device is refused,
 * and so is a new file in `/dev` (a typo there would leave a regular file among the devices).
 * @throws ConfigurationError naming the input, e.g. `--out: the folder /nonexistent does not exist`.
 */
export async function checkOutputPaths(
  outputs: readonly OutputPath[],
  inputs: readonly OutputPath[] = [],
): Promise<void> {
  const seen: Array<OutputPath & { id: string; stream?: boolean }> = [];
  for (const input of inputs) {
    const inputStat = await stat(input.path).catch(() => undefined);
    if (inputStat) seen.push({ ...input, id: `${inputStat.dev}:${inputStat.ino}` });
  }
  for (const output of outputs) {
    const file = path.resolve(output.path);
    const folder = path.dirname(file);
    const fileStat = await stat(file).catch(() => undefined);
    if (fileStat?.isDirectory()) {
      throw new ConfigurationError(`${output.input}: ${output.path} is a directory; name a file`);
    }
    if (fileStat && (fileStat.isSocket() || fileStat.isBlockDevice())) {
      const kind = fileStat.isSocket() ? 'a socket' : 'a block device';
      throw new ConfigurationError(`${output.input}: ${output.path} is ${kind}; name a file`);
    }
    const stream = fileStat !== undefined && (fileStat.isCharacterDevice() || fileStat.isFIFO());
    if (stream) {
      try {
        await access(file, constants.W_OK);
      } catch {
        throw new ConfigurationError(`${output.input}: ${output.path} is not writable`);
      }
      if (!seen.some((s) => s.id === `${fileStat.dev}:${fileStat.ino}` && !s.stream)) {
        seen.push({ ...output, id: `${fileStat.dev}:${fileStat.ino}`, stream: true });
        continue;
      }
    }
    if (!fileStat && (folder === '/dev' || folder.startsWith('/dev/'))) {
      throw new ConfigurationError(
        `${output.input}: ${output.path} does not exist, and no file is made in /dev; name a file elsewhere`,
      );
    }
    const folderStat = await stat(folder).catch(() => undefined);
    if (!folderStat) throw new ConfigurationError(`${output.input}: the folder ${folder} does not exist`);
    if (!folderStat.isDirectory()) throw new ConfigurationError(`${output.input}: ${folder} is not a folder`);
    try {
      await access(folder, constants.W_OK);
      if (fileStat) await access(file, constants.W_OK);
    } catch {
      throw new ConfigurationError(`${output.input}: ${output.path} is not writable`);
    }
    // The same file by path, or through a link (same device and inode).
    const id = fileStat ? `${fileStat.dev}:${fileStat.ino}` : file;
    const twin = seen.find((s) => s.id === id || path.resolve(s.path) === file);
    if (twin) {
      throw new ConfigurationError(
        `${output.input}: ${output.path} is the same file as ${twin.input} ${twin.path}; give each its own file`,
      );
    }
    seen.push({ ...output, id });
  }
}
