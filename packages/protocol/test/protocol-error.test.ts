import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorReplySchema } from '../src/error-reply.ts';
import { parseRequest } from '../src/parse-request.ts';
import { ProtocolError } from '../src/protocol-error.ts';
import { AppendRequestSchema } from '../src/requests.ts';
import { TransportError } from '@baton/client';

describe('ProtocolError', () => {
  it('turns into the wire error reply, without a details key when there are none', () => {
    const reply = new ProtocolError('not_found', 'unknown session s1').toReply();
    expect(reply).toEqual({ ok: false, error: { code: 'not_found', message: 'unknown session s1' } });
    expect('details' in reply.error).toBe(false);
    expect(ErrorReplySchema.parse(reply)).toEqual(reply);
  });

  it('carries details into the reply', () => {
    const reply = new ProtocolError('conflict', 'busy', { holder: 'd2' }).toReply();
    expect(reply.error.details).toEqual({ holder: 'd2' });
  });

  it('maps anything thrown to a ProtocolError', () => {
    const own = new ProtocolError('unavailable', 'draining');
    expect(ProtocolError.from(own)).toBe(own);
    expect(ProtocolError.from(new TransportError('too_large', 'reply too big')).code).toBe('too_large');
    const internal = ProtocolError.from(new Error('boom'));
    expect([internal.code, internal.message]).toEqual(['internal', 'boom']);
    expect(ProtocolError.from('weird').code).toBe('internal');
  });
});

describe('parseRequest', () => {
  it('returns the typed value', () => {
    const schema = z.object({ n: z.int() });
    expect(parseRequest(schema, { n: 3 }).n).toBe(3);
  });

  it('throws bad_request naming the first failing path and listing all of them', () => {
    let caught: unknown;
    try {
      parseRequest(AppendRequestSchema, { messages: [{ id: 'a', role: 'robot', content: 'x' }, { id: 'b', role: 'user' }] });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProtocolError);
    const error = caught as ProtocolError;
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(/^invalid request: messages\.0\.role: .+ \(and 1 more\)$/);
    expect(error.details).toEqual([
      { path: 'messages.0.role', message: expect.stringContaining('user') as unknown },
      { path: 'messages.1.content', message: 'expected a string, an array of objects or null' },
    ]);
    expect(ErrorReplySchema.safeParse(error.toReply()).success).toBe(true);
  });

  it('reports an unknown key at its own path', () => {
    expect(() => parseRequest(z.strictObject({ a: z.int() }), { a: 1, b: 2, c: 3 })).toThrow(
      expect.objectContaining({ details: [{ path: 'b', message: 'unknown field' }, { path: 'c', message: 'unknown field' }] }),
    );
  });

  it('reports a wrong body type at the empty path', () => {
    expect(() => parseRequest(AppendRequestSchema, 'x')).toThrow(
      expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/^invalid request: body: /) as unknown }),
    );
  });
});
