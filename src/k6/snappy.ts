/**
 * Snappy block decompression: the body encoding of Prometheus remote write, which k6's
 * `experimental-prometheus-rw` output always uses (k6 v2.2.0 `output/prometheusrw/remote/client.go`:
 * `Content-Encoding: snappy`, the block format, not the framed one).
 *
 * Format: https://github.com/google/snappy/blob/main/format_description.txt — a varint of the
 * uncompressed length, then elements: a literal (tag low bits 00) or a copy with a 1-, 2- or 4-byte
 * offset (01, 10, 11). Small and dependency-free; a library (`snappyjs`) could replace it.
 */

/**
 * Decompresses one snappy block.
 * @throws Error `snappy: …` naming what is corrupt (truncated input, an offset before the start,
 *   a length that does not match the header).
 */
export function decodeSnappy(input: Uint8Array): Uint8Array {
  let pos = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= input.length || shift > 28) throw new Error('snappy: bad length header');
    const b = input[pos++]!;
    length += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  const out = new Uint8Array(length);
  let o = 0;
  while (pos < input.length) {
    const tag = input[pos++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let len = tag >>> 2;
      if (len >= 60) {
        const bytes = len - 59;
        if (pos + bytes > input.length) throw new Error('snappy: truncated literal length');
        len = 0;
        for (let i = 0; i < bytes; i++) len += input[pos + i]! * 2 ** (8 * i);
        pos += bytes;
      }
      len += 1;
      if (pos + len > input.length || o + len > length) throw new Error('snappy: truncated literal');
      out.set(input.subarray(pos, pos + len), o);
      pos += len;
      o += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      len = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | input[pos++]!;
    } else if (kind === 2) {
      len = (tag >>> 2) + 1;
      offset = input[pos]! | (input[pos + 1]! << 8);
      pos += 2;
    } else {
      len = (tag >>> 2) + 1;
      offset =
        (input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24)) >>> 0;
      pos += 4;
    }
    if (pos > input.length) throw new Error('snappy: truncated copy');
    if (offset === 0 || offset > o || o + len > length) throw new Error('snappy: bad copy offset');
    // Copies may overlap their own output (a run): byte by byte.
    for (let i = 0; i < len; i++, o++) out[o] = out[o - offset]!;
  }
  if (o !== length) throw new Error(`snappy: ${o} bytes decoded, header says ${length}`);
  return out;
}
