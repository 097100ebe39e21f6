/** Characters of an inline image's data counted, whatever its size (a provider counts an image by its pixels). */
const IMAGE_CHARS = 4_000;
/** A long string of base64 (an image, a file) or a data URL: counted as an image, not as text. */
const INLINE_DATA = /^(data:[\w/+.-]+;base64,)?[A-Za-z0-9+/=\r\n]{2000,}$/;

/** About how many tokens (by Baton's count) an item takes: a token per four characters of its JSON, inline data aside. */
export function estimatedTokens(item: unknown): number {
  let chars = 0;
  const walk = (v: unknown): void => {
    if (typeof v === 'string') chars += v.length > 2_000 && INLINE_DATA.test(v) ? IMAGE_CHARS : v.length + 2;
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        chars += k.length + 4;
        walk(x);
      }
    }
    else chars += 5;
  };
  walk(item);
  return Math.ceil(chars / 4);
}
