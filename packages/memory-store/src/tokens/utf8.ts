/**
 * UTF-8 helpers of the token counter: encoding text into a reused buffer, and checking byte sequences.
 */

/**
 * Writes `text` (or its code units `[start, end)`) as UTF-8 into `out` (which must hold 3 bytes per code unit) and
 * returns the number of bytes written, negated when the text held a lone surrogate. A lone surrogate is written as
 * U+FFFD (EF BF BD), as `TextEncoder` and `Buffer.from` do; a surrogate pair cut by `end` is one.
 */
export function encodeUtf8Into(text: string, out: Uint8Array, start = 0, end = text.length): number {
  let n = 0;
  let wellFormed = true;
  const length = end;
  for (let i = start; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      out[n++] = c;
    } else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    } else {
      const d = c <= 0xdbff && i + 1 < length ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        const point = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        out[n++] = 0xf0 | (point >> 18);
        out[n++] = 0x80 | ((point >> 12) & 0x3f);
        out[n++] = 0x80 | ((point >> 6) & 0x3f);
        out[n++] = 0x80 | (point & 0x3f);
        i++;
      } else {
        out[n++] = 0xef;
        out[n++] = 0xbf;
        out[n++] = 0xbd;
        wellFormed = false;
      }
    }
  }
  return wellFormed ? n : -n;
}

/**
 * Whether `bytes[start..end)` is well-formed UTF-8: no stray continuation byte, no truncated sequence, no overlong
 * form, no surrogate, nothing past U+10FFFF.
 */
export function isValidUtf8(bytes: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    const lead = bytes[i] ?? 0;
    let more: number;
    let point: number;
    if (lead < 0x80) {
      i++;
      continue;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      more = 1;
      point = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      more = 2;
      point = lead & 0x0f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      more = 3;
      point = lead & 0x07;
    } else {
      return false;
    }
    if (i + more >= end) return false;
    for (let k = 1; k <= more; k++) {
      const next = bytes[i + k] ?? 0;
      if ((next & 0xc0) !== 0x80) return false;
      point = (point << 6) | (next & 0x3f);
    }
    if ((more === 2 && point < 0x800) || (more === 3 && point < 0x10000)) return false;
    if (point >= 0xd800 && point <= 0xdfff) return false;
    if (point > 0x10ffff) return false;
    i += more + 1;
  }
  return true;
}
