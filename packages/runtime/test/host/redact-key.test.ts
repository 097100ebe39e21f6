import { describe, expect, it } from 'vitest';
import { REDACTED, redactKey } from '../../src/host/redact-key.ts';

const KEY = 'sk-agent-0123456789';

describe('redactKey', () => {
  it('replaces the key in every string of plain data, object keys included', () => {
    const value = {
      failure: { kind: 'auth', message: `401 Incorrect API key provided: ${KEY}. Twice: ${KEY}` },
      list: ['fine', `key=${KEY}`, 3, null, { [KEY]: true }],
    };
    expect(redactKey(value, KEY)).toEqual({
      failure: { kind: 'auth', message: `401 Incorrect API key provided: ${REDACTED}. Twice: ${REDACTED}` },
      list: ['fine', `key=${REDACTED}`, 3, null, { [REDACTED]: true }],
    });
    // The input is left as it was.
    expect(value.failure.message).toContain(KEY);
  });

  it('returns the same value when nothing holds the key, when there is no key, or when it is too short to redact', () => {
    const value = { a: ['x', { b: 'y' }], c: 'plain text' };
    expect(redactKey(value, KEY)).toBe(value);
    expect(redactKey(`has ${KEY}`, null)).toBe(`has ${KEY}`);
    expect(redactKey('the test passed', 'test')).toBe('the test passed');
  });

  it('leaves values that are not plain data as they are', () => {
    const bytes = new TextEncoder().encode(KEY);
    const error = new Error(KEY);
    expect(redactKey(bytes, KEY)).toBe(bytes);
    expect(redactKey(error, KEY)).toBe(error);
  });
});
