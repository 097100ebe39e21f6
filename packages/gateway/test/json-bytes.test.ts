import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setMemberBytes, topLevelMembers } from '../src/json-bytes.ts';
import { setMember } from '../src/json-splice.ts';

describe('json bytes', () => {
  const text = '{ "model": "m",\n  "messages": [{"role":"user","content":"a}\\"b ] é ✓ 🙂"}],\n  "tools": [{"x": {"y": [1, 2]}}], "stream": true }';

  it('finds the top-level members at byte offsets, across multi-byte characters', () => {
    const bytes = Buffer.from(text);
    expect(topLevelMembers(bytes).map((m) => [m.key, bytes.toString('utf8', m.valueStart, m.valueEnd)])).toEqual([
      ['model', '"m"'],
      ['messages', '[{"role":"user","content":"a}\\"b ] é ✓ 🙂"}]'],
      ['tools', '[{"x": {"y": [1, 2]}}]'],
      ['stream', 'true'],
    ]);
  });

  it('sets a member as the text splice does, keeping every other byte', () => {
    for (const body of [text, '{}', '{ }', '{"a":1}', '{"stream_options":{"include_usage":false},"stream":true}', '{"a":"\\\\","b":[]  \n}']) {
      for (const value of ['{"include_usage":true}', '1']) {
        expect(setMemberBytes(Buffer.from(body), 'stream_options', value).toString('utf8')).toBe(setMember(body, 'stream_options', value));
      }
    }
  });

  it('sets a member as the text splice does for any JSON object (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), fc.constantFrom('stream_options', 'a', ''), (object, pretty, key) => {
        const body = JSON.stringify(object, null, pretty ? 2 : undefined);
        expect(setMemberBytes(Buffer.from(body), key, '{"include_usage":true}').toString('utf8')).toBe(setMember(body, key, '{"include_usage":true}'));
      }),
    );
  });

  it('leaves bytes that are not valid UTF-8 as they were', () => {
    const body = Buffer.concat([Buffer.from('{"messages":[{"content":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}]}')]);
    const out = setMemberBytes(body, 'stream_options', '{"include_usage":true}');
    expect(out.subarray(0, body.length - 1).equals(body.subarray(0, -1))).toBe(true);
    expect(out.subarray(body.length - 1).toString()).toBe(',"stream_options":{"include_usage":true}}');
  });
});
