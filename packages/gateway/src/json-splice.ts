/** Where one member of a JSON object's top level sits in the text: its key and its value's span. */
export interface MemberSpan {
  readonly key: string;
  readonly valueStart: number;
  readonly valueEnd: number;
}

const QUOTE = 34;
const BACKSLASH = 92;

/** Whether a character code is JSON whitespace (space, tab, line feed, carriage return). */
const isWs = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

function skipWs(text: string, i: number): number {
  while (i < text.length && isWs(text.charCodeAt(i))) i++;
  return i;
}

/**
 * End (exclusive) of the JSON string starting at `i` (a `"`). Jumps from quote to quote (a request's text is mostly
 * long strings); a quote preceded by an odd number of backslashes is escaped.
 */
function stringEnd(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) throw new SyntaxError('unterminated string');
    let b = q - 1;
    while (b > i && text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** End (exclusive) of the JSON value starting at `i`. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === 123 || c === 91) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === QUOTE) j = stringEnd(text, j) - 1;
      else if (d === 123 || d === 91) depth++;
      else if (d === 125 || d === 93) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new SyntaxError('unterminated value');
  }
  let j = i;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (isWs(d) || d === 44 || d === 125 || d === 93) break;
  }
  return j;
}

/**
 * The members of the top-level object of valid JSON `text`, with their value spans; plus the position of the closing
 * brace. Used to edit one member of a request body while every other byte stays as the agent sent it.
 */
export function topLevelMembers(text: string): { members: MemberSpan[]; close: number } {
  let i = skipWs(text, 0);
  if (text[i] !== '{') throw new SyntaxError('not a JSON object');
  i = skipWs(text, i + 1);
  const members: MemberSpan[] = [];
  while (text[i] !== '}') {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    if (text[i] !== ':') throw new SyntaxError('expected a colon');
    const valueStart = skipWs(text, i + 1);
    const end = valueEnd(text, valueStart);
    members.push({ key, valueStart, valueEnd: end });
    i = skipWs(text, end);
    if (text[i] === ',') i = skipWs(text, i + 1);
  }
  return { members, close: i };
}

/**
 * `text` with the top-level member `key` set to `valueJson`: its value replaced in place when present, else the
 * member added before the closing brace. Every other byte is kept.
 */
export function setMember(text: string, key: string, valueJson: string): string {
  const { members, close } = topLevelMembers(text);
  const member = members.find((m) => m.key === key);
  if (member !== undefined) return text.slice(0, member.valueStart) + valueJson + text.slice(member.valueEnd);
  const before = text.slice(0, close).replace(/\s+$/, '');
  const sep = members.length > 0 ? ',' : '';
  return `${before}${sep}${JSON.stringify(key)}:${valueJson}${text.slice(close)}`;
}
