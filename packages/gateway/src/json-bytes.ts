/**
 * Walking the structure of JSON held as UTF-8 bytes, without decoding it: every structural character of JSON is
 * ASCII, and no byte of a multi-byte UTF-8 sequence is, so byte offsets found here are exact places to cut the body.
 * The walkers assume the text they cross is JSON; what they return is checked by `JSON.parse` before it is trusted.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Whether a byte is JSON whitespace (space, tab, line feed, carriage return). */
const isWs = (c: number | undefined): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

export function skipWs(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && isWs(bytes[i])) i++;
  return i;
}

/** End (exclusive) of the JSON string starting at `i` (a quote); a quote after an odd run of backslashes is escaped. */
export function stringEnd(bytes: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = bytes.indexOf(QUOTE, from);
    if (q < 0) throw new SyntaxError('unterminated string');
    let b = q - 1;
    while (b > i && bytes[b] === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** End (exclusive) of the JSON value starting at `i`. */
export function valueEnd(bytes: Buffer, i: number): number {
  const c = bytes[i];
  if (c === QUOTE) return stringEnd(bytes, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < bytes.length; j++) {
      const d = bytes[j];
      if (d === QUOTE) j = stringEnd(bytes, j) - 1;
      else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new SyntaxError('unterminated value');
  }
  let j = i;
  while (j < bytes.length) {
    const d = bytes[j];
    if (isWs(d) || d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET) break;
    j++;
  }
  if (j === i) throw new SyntaxError('expected a value');
  return j;
}

/** One member of a JSON object's top level: its key and where its value sits in the bytes. */
export interface ByteMember {
  readonly key: string;
  readonly valueStart: number;
  readonly valueEnd: number;
}

/** The members of the top-level object of the JSON in `bytes`, in order (keys decoded). */
export function topLevelMembers(bytes: Buffer): ByteMember[] {
  return topLevelObject(bytes).members;
}

/**
 * `bytes` with the top-level member `key` set to `valueJson`: its value replaced in place when present, else the
 * member added before the closing brace. Every other byte is kept as it was (no decoding, no re-encoding).
 */
export function setMemberBytes(bytes: Buffer, key: string, valueJson: string): Buffer {
  const { members, close } = topLevelObject(bytes);
  const value = Buffer.from(valueJson, 'utf8');
  const member = members.find((m) => m.key === key);
  if (member !== undefined) return Buffer.concat([bytes.subarray(0, member.valueStart), value, bytes.subarray(member.valueEnd)]);
  let end = close;
  while (end > 0 && isWs(bytes[end - 1])) end--;
  const added = Buffer.from(`${members.length > 0 ? ',' : ''}${JSON.stringify(key)}:`, 'utf8');
  return Buffer.concat([bytes.subarray(0, end), added, value, bytes.subarray(close)]);
}

/** The members of the top-level object of the JSON in `bytes` and the position of its closing brace. */
function topLevelObject(bytes: Buffer): { members: ByteMember[]; close: number } {
  let i = skipWs(bytes, 0);
  if (bytes[i] !== OPEN_BRACE) throw new SyntaxError('not a JSON object');
  i = skipWs(bytes, i + 1);
  const members: ByteMember[] = [];
  while (bytes[i] !== CLOSE_BRACE) {
    if (bytes[i] !== QUOTE) throw new SyntaxError('expected a key');
    const keyEnd = stringEnd(bytes, i);
    const key = JSON.parse(bytes.toString('utf8', i, keyEnd)) as string;
    i = skipWs(bytes, keyEnd);
    if (bytes[i] !== COLON) throw new SyntaxError('expected a colon');
    const start = skipWs(bytes, i + 1);
    const end = valueEnd(bytes, start);
    members.push({ key, valueStart: start, valueEnd: end });
    i = skipWs(bytes, end);
    if (bytes[i] === COMMA) i = skipWs(bytes, i + 1);
    else if (bytes[i] !== CLOSE_BRACE) throw new SyntaxError('expected a comma');
  }
  return { members, close: i };
}

/**
 * From `i`, just after an element of an array (inside it): the end of the array's last element and the position of
 * its closing bracket. `lastEnd` is `i` when no element follows.
 */
export function restOfArray(bytes: Buffer, i: number): { lastEnd: number; close: number } {
  let lastEnd = i;
  let j = skipWs(bytes, i);
  while (bytes[j] === COMMA) {
    const start = skipWs(bytes, j + 1);
    if (bytes[start] === CLOSE_BRACKET) throw new SyntaxError('a comma before the end of an array');
    lastEnd = valueEnd(bytes, start);
    j = skipWs(bytes, lastEnd);
  }
  if (bytes[j] !== CLOSE_BRACKET) throw new SyntaxError('expected a comma or the end of an array');
  return { lastEnd, close: j };
}

/** End (exclusive) of the last element of the array whose value spans `start`–`end` (`start` if it has none). */
export function lastElementEnd(bytes: Uint8Array, start: number, end: number): number {
  let j = end - 2;
  while (j > start && isWs(bytes[j])) j--;
  return j === start ? start : j + 1;
}

/**
 * The JSON text of an object holding the top-level members that follow `i` (just after a member's value): `{}` when
 * the object closes there, else the members after the comma. Throws when the bytes are not such a rest.
 */
export function restMembersText(bytes: Buffer, i: number): string {
  const j = skipWs(bytes, i);
  if (bytes[j] === CLOSE_BRACE) {
    if (skipWs(bytes, j + 1) !== bytes.length) throw new SyntaxError('text after the object');
    return '{}';
  }
  if (bytes[j] !== COMMA) throw new SyntaxError('expected a comma or the end of the object');
  const k = skipWs(bytes, j + 1);
  if (bytes[k] !== QUOTE) throw new SyntaxError('expected a key');
  return `{${bytes.toString('utf8', k)}`;
}
