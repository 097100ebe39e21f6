import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParsedPrefixes } from '../src/parsed-prefixes.ts';

/** A large tool output (a long log), with escaped quotes, backslashes and multi-byte characters in it. */
function bigOutput(bytes: number): string {
  const lines: string[] = [];
  for (let j = 0, size = 0; size < bytes; j++) {
    const line = `export const value_${j} = step(${j}, "module-${j % 7}"); // déjà vu \\ ✓ ${j % 3 === 0 ? '🙂' : ''}`;
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  return lines.join('\n');
}

type Item = Record<string, unknown>;
const body = (messages: Item[], extra: Record<string, unknown> = {}): Buffer => Buffer.from(JSON.stringify({ model: 'gpt-4.1', messages, tools: [{ type: 'function' }], ...extra }));

/** Parses `bytes` as the gateway does and checks the value is exactly `JSON.parse`'s (key order included). */
function parsedLikeJson(parser: ParsedPrefixes, bytes: Buffer, key = 'k'): unknown {
  let expected: string;
  try {
    expected = JSON.stringify(JSON.parse(bytes.toString('utf8')));
  } catch (err) {
    expect(() => parser.parse(key, 'messages', bytes)).toThrow((err as Error).constructor);
    return undefined;
  }
  const value = parser.parse(key, 'messages', bytes);
  // Compared by digest: a failure does not print the large text twice.
  expect(hash('sha256', JSON.stringify(value))).toBe(hash('sha256', expected));
  return value;
}

const history = (): Item[] => [
  { role: 'system', content: 'You are a careful coding agent.' },
  { role: 'user', content: 'Take a look at the build log.' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call-1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"build.log"}' } }] },
  { role: 'tool', tool_call_id: 'call-1', content: bigOutput(300_000) },
];

describe('ParsedPrefixes: a body that repeats the last one parses its new part only, to what JSON.parse gives', () => {
  it('reuses the items of the last body and parses the new ones and the members after them', () => {
    const parser = new ParsedPrefixes();
    const messages = history();
    const first = parsedLikeJson(parser, body(messages)) as { messages: Item[] };
    messages.push({ role: 'assistant', content: 'The build fails on a type error in ré.ts.' }, { role: 'user', content: 'Fix it 🙂' });
    const second = parsedLikeJson(parser, body(messages, { stream: true, stream_options: { include_usage: true } })) as { messages: Item[] };
    expect(parser.hits).toBe(1);
    // The earlier items are the objects the first parse made (not parsed again).
    expect(second.messages[3]).toBe(first.messages[3]);
    expect(second.messages).not.toBe(first.messages);
    // A body that adds nothing to the conversation, but changes a member after it.
    parsedLikeJson(parser, body(messages, { stream: false }));
    expect(parser.hits).toBe(2);
  });

  it('parses whole a body whose known part differs by one byte, in the large item or in a small earlier one', () => {
    const parser = new ParsedPrefixes();
    const messages = history();
    const first = parsedLikeJson(parser, body(messages)) as { messages: Item[] };
    messages.push({ role: 'assistant', content: 'Done.' });
    const big = messages[3]?.['content'] as string;
    // Same length, one character changed in the middle of the large output.
    const at = big.length >> 1;
    const editedBig = messages.map((m, i) => (i === 3 ? { ...m, content: `${big.slice(0, at)}${big[at] === 'x' ? 'y' : 'x'}${big.slice(at + 1)}` } : m));
    const second = parsedLikeJson(parser, body(editedBig)) as { messages: Item[] };
    expect(second.messages[3]).not.toBe(first.messages[3]);
    // One byte of the first user message (same length), the large item as it was.
    const editedSmall = editedBig.map((m, i) => (i === 1 ? { ...m, content: 'Take a look at the build lag.' } : m));
    const third = parsedLikeJson(parser, body(editedSmall)) as { messages: Item[] };
    expect(third.messages[1]?.['content']).toBe('Take a look at the build lag.');
    expect(parser.hits).toBe(0);
    expect(parser.misses).toBe(3);
  });

  it('gives what JSON.parse gives for repeated keys, a __proto__ key, whitespace and bodies that are not JSON', () => {
    const parser = new ParsedPrefixes({ minBytes: 0 });
    const messages = history();
    const base = body(messages).toString('utf8').slice(0, -1);
    const texts = [
      `${base}}`,
      `${base},"model":"other"}`,
      `${base},"messages":[{"role":"user","content":"again"}]}`,
      `${base},"__proto__":{"polluted":true}}`,
      `${base.replace('"}],"tools"', '"}] ,\n "tools"')} }\n`,
      `${base.replace('"}],"tools"', '"},{"role":"user"}],"tools"')}}`,
      `${base.replace('"}],"tools"', '"},],"tools"')}}`,
      `${base},}`,
      `${base}} trailing`,
      `${base}`,
      `${base.replace('"}],"tools"', '"},{"role":"user","content":"next"} ],"tools"')}}`,
    ];
    for (const text of texts) {
      // Each after the plain body, so the known part matches and the rest decides.
      parsedLikeJson(parser, Buffer.from(`${base}}`));
      parsedLikeJson(parser, Buffer.from(text));
    }
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('gives what JSON.parse gives for any one-byte change of a growing conversation (property)', () => {
    const messages = history().map((m, i) => (i === 3 ? { ...m, content: bigOutput(2_000) } : m));
    const before = body(messages);
    const after = body([...messages, { role: 'assistant', content: 'Done: "ok" \\ é' }, { role: 'user', content: 'next' }], { stream: true });
    fc.assert(
      fc.property(fc.nat({ max: after.length - 1 }), fc.integer({ min: 0x20, max: 0x7e }), (at, byte) => {
        const parser = new ParsedPrefixes({ minBytes: 0 });
        parsedLikeJson(parser, before);
        const edited = Buffer.from(after);
        edited[at] = byte;
        parsedLikeJson(parser, edited);
        // A change inside the known part is always a miss.
        if (at < before.length - 40 && edited[at] !== after[at]) expect(parser.hits).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps bodies within its budget (each counted twice: bytes and parsed items), the least recently used going first, and none over a quarter of it', () => {
    const parser = new ParsedPrefixes({ budget: 3_000_000, minBytes: 0 });
    const one = body(history());
    expect(one.length).toBeGreaterThan(300_000);
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) parser.parse(key, 'messages', one);
    expect(parser.bytes).toBeLessThanOrEqual(3_000_000);
    expect(parser.bytes).toBeGreaterThan(2_000_000);
    // 'a' went first: its next body is parsed whole; 'f' was kept.
    const grown = body([...history(), { role: 'assistant', content: 'ok' }]);
    parser.parse('a', 'messages', grown);
    parser.parse('f', 'messages', grown);
    expect([parser.hits, parser.misses]).toEqual([1, 7]);
    const huge = new ParsedPrefixes({ budget: 2_000_000, minBytes: 0 });
    huge.parse('a', 'messages', one);
    huge.parse('a', 'messages', grown);
    expect([huge.bytes, huge.hits]).toEqual([0, 0]);
  });

  it('keeps the conversations sent under one key apart (side calls, sub-agents), four at most', () => {
    const parser = new ParsedPrefixes();
    const main = history();
    const others = [1, 2, 3, 4].map((n) => history().map((m, i) => (i === 1 ? { ...m, content: `Side call ${n}: give this conversation a title.` } : m)));
    parsedLikeJson(parser, body(main));
    for (const [n, other] of others.slice(0, 3).entries()) {
      parsedLikeJson(parser, body(other));
      main.push({ role: 'assistant', content: `step ${n}` });
      // The main conversation's next body still starts with its last one, and the side call's with its own.
      parsedLikeJson(parser, body(main));
      other.push({ role: 'user', content: 'and again' });
      parsedLikeJson(parser, body(other));
      expect([parser.hits, parser.misses]).toEqual([2 * (n + 1), n + 2]);
    }
    // A fifth conversation: the one used longest ago (the first side call) is forgotten, the main one is kept.
    parsedLikeJson(parser, body(others[3] ?? []));
    const first = others[0] ?? [];
    first.push({ role: 'assistant', content: 'a title' });
    parsedLikeJson(parser, body(first));
    main.push({ role: 'assistant', content: 'done' });
    parsedLikeJson(parser, body(main));
    expect([parser.hits, parser.misses]).toEqual([7, 6]);
  });

  it('parses small bodies whole and keeps nothing of them', () => {
    const parser = new ParsedPrefixes();
    const small = body([{ role: 'user', content: 'hi' }]);
    parser.parse('k', 'messages', small);
    parser.parse('k', 'messages', small);
    expect([parser.bytes, parser.hits, parser.misses]).toEqual([0, 0, 0]);
  });
});
