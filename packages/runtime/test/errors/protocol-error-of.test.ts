import { TransportError } from '@baton/client';
import { LogRecordError } from '@baton/log-schema';
import { MemoryStoreError } from '@baton/memory-store';
import { ProtocolError } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { errorReplyOf } from '../../src/daemon/answer-request.ts';
import { protocolErrorOf } from '../../src/errors/protocol-error-of.ts';
import { fromWireError, toWireError } from '../../src/host/wire-error.ts';

describe('protocolErrorOf: the code a client sees for another package’s error', () => {
  it('a memory file the daemon did not find is its own fault, not the client’s unknown session', () => {
    const err = new MemoryStoreError('not_found', 'no such file: sessions/s1/checkpoint.md', { path: 'sessions/s1/checkpoint.md' });
    expect(errorReplyOf(err)).toEqual({ ok: false, error: { code: 'internal', message: 'no such file: sessions/s1/checkpoint.md' } });
    // Across a worker thread too: the code is decided before the error leaves the thread that threw it.
    expect(fromWireError(toWireError(err)).code).toBe('internal');
  });

  it('JetStream not answering is retryable; every other cluster failure is internal', () => {
    expect(protocolErrorOf(new ClusterError('unavailable', 'no leader', { stream: 'x' })).toReply().error).toEqual({ code: 'unavailable', message: 'no leader', details: { stream: 'x' } });
    expect(protocolErrorOf(new ClusterError('fenced', 'taken over')).code).toBe('internal');
    expect(protocolErrorOf(new ClusterError('bad_entry', 'bad')).toReply().error).toEqual({ code: 'internal', message: 'bad' });
  });

  it('a transport’s payload limit and permission refusals keep their meaning; its other failures are internal', () => {
    expect(protocolErrorOf(new TransportError('too_large', 'reply too big')).code).toBe('too_large');
    expect(protocolErrorOf(new TransportError('forbidden', 'publish denied')).code).toBe('forbidden');
    expect(protocolErrorOf(new TransportError('timeout', 'timed out')).code).toBe('internal');
  });

  it('a malformed record in the log is internal', () => {
    expect(protocolErrorOf(new LogRecordError('session/s', 3, 'x', ['unknown record type x'])).code).toBe('internal');
  });

  it('a protocol error is kept as it is; a plain error with a protocol code keeps it; anything else is internal', () => {
    const own = new ProtocolError('conflict', 'busy', { a: 1 });
    expect(protocolErrorOf(own)).toBe(own);
    const plain = Object.assign(new Error('gone'), { code: 'not_found', details: { id: 's' } });
    expect(protocolErrorOf(plain).toReply().error).toEqual({ code: 'not_found', message: 'gone', details: { id: 's' } });
    expect(protocolErrorOf(Object.assign(new Error('disk'), { code: 'ENOSPC' })).code).toBe('internal');
    expect(protocolErrorOf('a string').toReply().error).toEqual({ code: 'internal', message: 'a string' });
    const wrapped = protocolErrorOf(new Error('boom'));
    expect(wrapped.cause).toBeInstanceOf(Error);
  });
});
