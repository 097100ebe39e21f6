import { describe, expect, it } from 'vitest';
import { setMember, topLevelMembers } from '../src/json-splice.ts';

describe('json splice', () => {
  const body = '{ "model": "m",\n  "messages": [{"role":"user","content":"a}\\"b ]"}],\n  "tools": [{"x": {"y": [1, 2]}}], "stream": true }';

  it('finds the top-level members and their value spans', () => {
    const { members } = topLevelMembers(body);
    expect(members.map((m) => [m.key, body.slice(m.valueStart, m.valueEnd)])).toEqual([
      ['model', '"m"'],
      ['messages', '[{"role":"user","content":"a}\\"b ]"}]'],
      ['tools', '[{"x": {"y": [1, 2]}}]'],
      ['stream', 'true'],
    ]);
  });

  it('replaces one member and keeps every other byte', () => {
    const out = setMember(body, 'messages', '[]');
    expect(out).toBe(body.replace('[{"role":"user","content":"a}\\"b ]"}]', '[]'));
    expect(JSON.parse(out)).toEqual({ ...(JSON.parse(body) as object), messages: [] });
  });

  it('adds a missing member before the closing brace', () => {
    const out = setMember(body, 'stream_options', '{"include_usage":true}');
    expect(out.startsWith(body.slice(0, body.lastIndexOf('true') + 4))).toBe(true);
    expect((JSON.parse(out) as { stream_options: unknown }).stream_options).toEqual({ include_usage: true });
    expect(setMember('{}', 'a', '1')).toBe('{"a":1}');
  });

  it('tells an escaped quote from one that ends a string after escaped backslashes', () => {
    const text = JSON.stringify({ a: 'ends in a backslash \\', b: ['quote \\" inside', { c: '\\\\"}]' }], d: '' });
    const { members } = topLevelMembers(text);
    expect(members.map((m) => [m.key, JSON.parse(text.slice(m.valueStart, m.valueEnd)) as unknown])).toEqual(Object.entries(JSON.parse(text) as object));
  });

  it('refuses what is not a JSON object', () => {
    expect(() => topLevelMembers('[1]')).toThrow(SyntaxError);
  });
});
