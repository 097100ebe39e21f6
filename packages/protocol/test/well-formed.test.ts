import { describe, expect, it } from 'vitest';
import { decodeRequest, encodeRequest } from '../src/codec.ts';
import { makeWellFormed, wellFormed } from '../src/well-formed.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };
const json = (text: string) => new TextEncoder().encode(text);

describe('lone surrogates are replaced on arrival', () => {
  it('replaces unpaired high and low surrogates with U+FFFD and keeps pairs and other planes', () => {
    expect(wellFormed('a\ud800b')).toBe('a\ufffdb');
    expect(wellFormed('\udfffx\ud83d')).toBe('\ufffdx\ufffd');
    expect(wellFormed('😀 \u{10FFFF} \u0000 é')).toBe('😀 \u{10FFFF} \u0000 é');
  });

  it('fixes values and keys of a decoded JSON request in place, keeping key order', () => {
    const { value } = decodeRequest(json('{"b":"x\\ud800","\\udc00k":1,"a":[{"c":"\\udbff"}]}'), JSON_HEADERS);
    expect(value).toEqual({ b: 'x\ufffd', '\ufffdk': 1, a: [{ c: '\ufffd' }] });
    expect(Object.keys(value as object)).toEqual(['b', '\ufffdk', 'a']);
  });

  it('decodes MessagePack strings written from lone surrogates to well-formed text', () => {
    const { value } = decodeRequest(encodeRequest({ content: 'q\ud800' }, 'msgpack'), {});
    expect(value).toEqual({ content: 'q\ufffd' });
  });

  it('returns well-formed values untouched and survives deep nesting', () => {
    const plain = { messages: [{ id: 'm1', content: 'fine' }] };
    expect(makeWellFormed(plain)).toBe(plain);
    let deep: unknown = '\ud800';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => makeWellFormed(deep)).not.toThrow();
  });
});
