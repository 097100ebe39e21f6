/**
 * An independent, minimal MessagePack reader for tests: walks the bytes by the spec and returns the type byte of
 * every value, so a test can assert which formats an encoder used (e.g. no extension types, int64 not float64).
 * Throws on anything malformed or on trailing bytes.
 */
export function msgpackTypeBytes(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const seen: number[] = [];
  let pos = 0;
  const need = (n: number): void => {
    if (pos + n > bytes.length) throw new Error(`truncated at ${pos}`);
  };
  const u8 = (): number => {
    need(1);
    return bytes[pos++] as number;
  };
  const uint = (n: 1 | 2 | 4): number => {
    need(n);
    const v = n === 1 ? view.getUint8(pos) : n === 2 ? view.getUint16(pos) : view.getUint32(pos);
    pos += n;
    return v;
  };
  const skip = (n: number): void => {
    need(n);
    pos += n;
  };
  const value = (): void => {
    const t = u8();
    seen.push(t);
    if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return;
    if (t >= 0x80 && t <= 0x8f) return entries(t & 0x0f, 2);
    if (t >= 0x90 && t <= 0x9f) return entries(t & 0x0f, 1);
    if (t >= 0xa0 && t <= 0xbf) return skip(t & 0x1f);
    switch (t) {
      case 0xc4: case 0xd9: return skip(uint(1));
      case 0xc5: case 0xda: return skip(uint(2));
      case 0xc6: case 0xdb: return skip(uint(4));
      case 0xc7: return skip(uint(1) + 1);
      case 0xc8: return skip(uint(2) + 1);
      case 0xc9: return skip(uint(4) + 1);
      case 0xca: return skip(4);
      case 0xcb: return skip(8);
      case 0xcc: case 0xd0: return skip(1);
      case 0xcd: case 0xd1: return skip(2);
      case 0xce: case 0xd2: return skip(4);
      case 0xcf: case 0xd3: return skip(8);
      case 0xd4: return skip(2);
      case 0xd5: return skip(3);
      case 0xd6: return skip(5);
      case 0xd7: return skip(9);
      case 0xd8: return skip(17);
      case 0xdc: return entries(uint(2), 1);
      case 0xdd: return entries(uint(4), 1);
      case 0xde: return entries(uint(2), 2);
      case 0xdf: return entries(uint(4), 2);
      default: throw new Error(`invalid type byte 0x${t.toString(16)} at ${pos - 1}`);
    }
  };
  const entries = (count: number, per: 1 | 2): void => {
    for (let i = 0; i < count * per; i++) {
      if (per === 2 && i % 2 === 0) {
        // Map keys must be strings for every decoder that maps to objects.
        const k = bytes[pos];
        if (k === undefined || !((k >= 0xa0 && k <= 0xbf) || k === 0xd9 || k === 0xda || k === 0xdb)) {
          throw new Error(`non-string map key at ${pos}`);
        }
      }
      value();
    }
  };
  value();
  if (pos !== bytes.length) throw new Error(`trailing bytes at ${pos}`);
  return seen;
}

/** Extension type bytes: fixext 1–16 and ext 8/16/32. */
export const EXT_TYPE_BYTES: readonly number[] = [0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xc7, 0xc8, 0xc9];
