/** Where one member of a JSON object's top level sits in the text: its key and its value's span. */
export interface MemberSpan {
  readonly key: string;
  readonly valueStart: number;
  readonly valueEnd: number;
}

const WS = new Set([' ', '\t', '\n', '\r']);

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text[i] as string)) i++;
  return i;
}

/** End (exclusive) of the JSON string starting at `i` (a `"`). */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') j++;
    else if (c === '"') return j + 1;
  }
  throw new SyntaxError('unterminated string');
}

/** End (exclusive) of the JSON value starting at `i`. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') j = stringEnd(text, j) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new SyntaxError('unterminated value');
  }
  let j = i;
  while (j < text.length && !WS.has(text[j] as string) && text[j] !== ',' && text[j] !== '}' && text[j] !== ']') j++;
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
