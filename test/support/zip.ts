// GitHub serves artifacts as zip archives, and @actions/artifact unpacks them with unzip-stream:
// the tests serve real zips made with fflate.
import { zipSync } from 'fflate';

/** A zip archive of the given files. */
export function zipStored(files: Record<string, string | Buffer>): Buffer {
  const entries = Object.fromEntries(
    Object.entries(files).map(([name, content]) => [
      name,
      typeof content === 'string' ? Buffer.from(content) : content,
    ]),
  );
  return Buffer.from(zipSync(entries));
}
