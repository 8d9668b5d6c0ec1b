import { randomBytes } from 'node:crypto';
import { chmod, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writing an output file (the result JSON, the markdown and HTML reports) so that a reader never
 * sees a half-written file and a failed write never passes for a written one.
 *
 * Why not write-file-atomic: its 8.0.0 resolves after a partial `fs.write` on ENOSPC (13,000
 * bytes with 4 KB free resolve, and 4,096 bytes are on disk), and it renames its temporary file
 * over a device such as `/dev/null`, replacing the device with a regular file. Node's own
 * `fs.promises.writeFile` writes until every byte is out and rejects on ENOSPC; the rest is a
 * rename.
 */

/** What {@link outputKind} says of a path: where and how a write goes. */
export type OutputKind =
  /** A regular file, or none yet: written to a temporary file beside it, then renamed over it. */
  | 'file'
  /** A character device (`/dev/null`, a terminal) or a FIFO: written in place, never renamed over. */
  | 'stream';

/**
 * How a path is written: `stream` for an existing character device or FIFO, `file` for anything
 * else (an existing regular file or no file). Other kinds (directories, sockets, block devices)
 * are refused before the load by `checkOutputPaths` (src/inputs/output-paths.ts).
 */
export async function outputKind(file: string): Promise<OutputKind> {
  const s = await stat(file).catch(() => undefined);
  return s && (s.isCharacterDevice() || s.isFIFO()) ? 'stream' : 'file';
}

/**
 * Writes `text` to `file` (UTF-8). A regular file is replaced atomically: the text goes to a
 * temporary file in the same folder (`<name>.<random>.tmp`), flushed to disk, its size checked,
 * then renamed over `file`, keeping an existing file's mode; on any failure the temporary file is
 * removed and the previous `file` is left as it was. A character device or FIFO ({@link outputKind})
 * is written in place.
 * @throws Error `could not write <file>: <code or reason>` (the cause attached), for ENOSPC, EACCES,
 *   a vanished folder, or a short write.
 */
export async function writeOutputFile(file: string, text: string): Promise<void> {
  if ((await outputKind(file)) === 'stream') {
    await writeFile(file, text).catch((error: unknown) => {
      throw writeError(file, error);
    });
    return;
  }
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const previous = await stat(file).catch(() => undefined);
    await writeFile(temp, text, { flush: true, mode: previous ? previous.mode & 0o7777 : 0o666 });
    const expected = Buffer.byteLength(text);
    const written = (await stat(temp)).size;
    if (written !== expected) throw new Error(`short write: ${written} of ${expected} bytes`);
    if (previous) await chmod(temp, previous.mode & 0o7777);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw writeError(file, error);
  }
}

function writeError(file: string, error: unknown): Error {
  const e = error as NodeJS.ErrnoException;
  const reason = e?.code
    ? `${e.code}${e.message ? `: ${e.message.replace(/^[A-Z]+: /, '')}` : ''}`
    : String(e?.message ?? e);
  return new Error(`could not write ${file}: ${reason}`, { cause: error });
}
