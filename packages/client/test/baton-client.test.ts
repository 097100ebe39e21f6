import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatonClient } from '../src/baton-client.ts';
import { BatonRequestError } from '../src/baton-request-error.ts';
import {
  contentTypeHeaders,
  decodeReply,
  encodeReply,
  type Encoding,
  type PublishedEvent,
  ProtocolError,
} from '@baton/protocol';
import { MemoryTransport } from '../src/transport/memory-transport.ts';
import { TransportError } from '../src/transport/transport-error.ts';
import {
  appendReply,
  AT,
  events,
  openReply,
  rebuildReply,
  runtimeStatusReply,
  statusReply,
} from '../../protocol/test/fixtures.ts';
import { startFakeDaemon, type Scripted } from './fake-daemon.ts';

const model = { id: 'gpt-4o', context_window: 128_000 };

/** Canned success replies by the subject's last token. */
function cannedReply(subject: string): Scripted {
  const verb = subject.slice(subject.lastIndexOf('.') + 1);
  switch (verb) {
    case 'open':
      return openReply;
    case 'append':
      return appendReply;
    case 'tasks':
      return { ok: true, count: 2 };
    case 'checkpoint':
      return { ok: true, result: 'queued' };
    case 'rebuild':
      return rebuildReply;
    case 'close':
      return { ok: true };
    case 'drain':
      return { ok: true, drained: 1, timed_out: 0, dropped: 0 };
    case 'status':
      return subject.includes('.runtime.') ? runtimeStatusReply : statusReply;
    default:
      return new ProtocolError('bad_request', `unknown subject ${subject}`).toReply();
  }
}

let transport: MemoryTransport;
beforeEach(() => {
  transport = new MemoryTransport();
});
afterEach(async () => {
  await transport.close();
});

describe('BatonClient requests', () => {
  it.each(['msgpack', 'json'] as const)('sends every request to its subject in %s and returns the parsed reply', async (encoding: Encoding) => {
    const fake = startFakeDaemon(transport, cannedReply);
    const client = new BatonClient(transport, { encoding });
    expect(await client.open({ project_id: 'p', model })).toEqual(openReply);
    expect(await client.append('s1', [{ id: 'm1', role: 'user', content: 'hi' }])).toEqual(appendReply);
    expect(await client.tasks('s1', [{ id: 'T1', status: 'open', summary: 'x' }])).toEqual({ ok: true, count: 2 });
    expect(await client.checkpoint('s1')).toEqual({ ok: true, result: 'queued' });
    expect(await client.rebuild('s1', { reason: 'manual', wait_ms: 0 })).toEqual(rebuildReply);
    expect(await client.status('s1')).toEqual(statusReply);
    expect(await client.close('s1')).toEqual({ ok: true });
    expect(await client.runtimeStatus()).toEqual(runtimeStatusReply);
    expect(await client.drain(5_000)).toEqual({ ok: true, drained: 1, timed_out: 0, dropped: 0 });
    expect(await client.drain()).toEqual({ ok: true, drained: 1, timed_out: 0, dropped: 0 });
    expect(fake.seen.map((r) => [r.subject, r.body])).toEqual([
      ['baton.v1.p.p.open', { project_id: 'p', model }],
      ['baton.v1.session.s1.append', { messages: [{ id: 'm1', role: 'user', content: 'hi' }] }],
      ['baton.v1.session.s1.tasks', { tasks: [{ id: 'T1', status: 'open', summary: 'x' }] }],
      ['baton.v1.session.s1.checkpoint', {}],
      ['baton.v1.session.s1.rebuild', { reason: 'manual', wait_ms: 0 }],
      ['baton.v1.session.s1.status', {}],
      ['baton.v1.session.s1.close', {}],
      ['baton.v1.runtime.status', {}],
      ['baton.v1.runtime.drain', { timeout_ms: 5_000 }],
      ['baton.v1.runtime.drain', {}],
    ]);
    expect(new Set(fake.seen.map((r) => r.encoding))).toEqual(new Set([encoding]));
  });

  it('marks JSON requests with the content-type header and MessagePack ones with none', async () => {
    const fake = startFakeDaemon(transport, cannedReply);
    await new BatonClient(transport, { encoding: 'json' }).checkpoint('s1');
    await new BatonClient(transport).checkpoint('s1');
    expect(fake.seen.map((r) => r.headers)).toEqual([{ 'content-type': 'application/json' }, {}]);
  });

  it('uses the configured prefix', async () => {
    const fake = startFakeDaemon(transport, cannedReply, 'acme');
    await new BatonClient(transport, { prefix: 'acme' }).status('s1');
    expect(fake.seen[0]?.subject).toBe('acme.v1.session.s1.status');
  });

  it("sends a session it opened on its project's subjects, and every session on them when it has a project", async () => {
    const fake = startFakeDaemon(transport, cannedReply);
    const client = new BatonClient(transport);
    await client.open({ project_id: 'shop', model });
    await client.append('sess-1', []).catch(() => {});
    await client.status('sess-1');
    await client.status('other');
    await client.open({ project_id: 'a/b.c', model });
    const scoped = new BatonClient(transport, { project: 'shop' });
    await scoped.status('other');
    await scoped.runtimeSessions().catch(() => {});
    await client.runtimeSessions().catch(() => {});
    expect(fake.seen.map((r) => r.subject)).toEqual([
      'baton.v1.p.shop.open',
      'baton.v1.p.shop.session.sess-1.append',
      'baton.v1.p.shop.session.sess-1.status',
      'baton.v1.session.other.status',
      // A project id that is no subject token goes on the unscoped subjects.
      'baton.v1.open',
      'baton.v1.p.shop.session.other.status',
      'baton.v1.p.shop.sessions',
      'baton.v1.runtime.sessions',
    ]);
    expect(() => new BatonClient(transport, { project: 'a.b' })).toThrow(/invalid project id/);
  });

  it('leaves undefined fields out of the request', async () => {
    const fake = startFakeDaemon(transport, cannedReply);
    await new BatonClient(transport).open({ project_id: 'p', model, agent: undefined, session_id: undefined });
    expect(fake.seen[0]?.body).toEqual({ project_id: 'p', model });
    expect(Object.keys(fake.seen[0]?.body ?? {})).toEqual(['project_id', 'model']);
  });

  it.each(['msgpack', 'json'] as const)('throws BatonRequestError with code, message and details for an error reply (%s)', async (encoding: Encoding) => {
    const details = [{ path: 'messages.0.role', message: 'Invalid option' }];
    startFakeDaemon(transport, () => new ProtocolError('bad_request', 'invalid request', details).toReply());
    const error = await new BatonClient(transport, { encoding }).append('s1', [{ id: 'm', role: 'user', content: '' }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatonRequestError);
    expect(error).toMatchObject({ code: 'bad_request', message: 'invalid request', details, subject: 'baton.v1.session.s1.append' });
  });

  it.each([
    ['not_found', new ProtocolError('not_found', 'unknown session s9')],
    ['unavailable', new ProtocolError('unavailable', 'draining')],
  ])('maps a %s reply', async (code, err) => {
    startFakeDaemon(transport, () => err.toReply());
    await expect(new BatonClient(transport).status('s9')).rejects.toMatchObject({ name: 'BatonRequestError', code });
  });

  it('reports a reply that breaks the reply schema as invalid_reply with the failing paths', async () => {
    startFakeDaemon(transport, () => ({ ok: true, result: 'maybe' }));
    await expect(new BatonClient(transport).checkpoint('s1')).rejects.toMatchObject({
      code: 'invalid_reply',
      details: [{ path: 'result', message: expect.any(String) as unknown }],
    });
  });

  it('reports an undecodable reply and a malformed error reply as invalid_reply', async () => {
    startFakeDaemon(transport, (subject) =>
      subject.endsWith('status') ? { raw: Uint8Array.of(0xc1) } : { ok: false, error: { code: 'teapot', message: 'x' } },
    );
    const client = new BatonClient(transport);
    await expect(client.status('s1')).rejects.toMatchObject({ code: 'invalid_reply' });
    await expect(client.close('s1')).rejects.toMatchObject({ code: 'invalid_reply', details: [{ path: 'error.code' }] });
  });

  it('decodes a reply in the encoding its own content-type names', async () => {
    startFakeDaemon(transport, () => ({ raw: encodeReply({ ok: true, count: 1 }, 'json'), headers: contentTypeHeaders('json') }));
    expect(await new BatonClient(transport).tasks('s1', [])).toEqual({ ok: true, count: 1 });
  });

  it('passes transport failures through as TransportError', async () => {
    const error = await new BatonClient(transport).status('s1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).code).toBe('no_responders');
  });

  it('refuses a session id that cannot be a subject token before sending anything', () => {
    expect(() => new BatonClient(transport).status('a.b')).toThrow(TypeError);
  });

  it('sends raw bytes with requestRaw, e.g. a malformed payload, and returns the raw reply', async () => {
    startFakeDaemon(transport, cannedReply);
    const reply = await new BatonClient(transport).requestRaw('baton.v1.session.s1.status', Uint8Array.of(0x82, 0xa1), {});
    expect(decodeReply(reply.data, 'msgpack')).toMatchObject({ ok: false, error: { code: 'decode_error' } });
    const jsonReply = await new BatonClient(transport).requestRaw('baton.v1.open', new TextEncoder().encode('{'), contentTypeHeaders('json'));
    expect(decodeReply(jsonReply.data, 'json')).toMatchObject({ ok: false, error: { code: 'decode_error' } });
  });
});

describe('BatonClient events', () => {
  const publish = (event: unknown, encoding: Encoding, sid = 'sess-1'): void => {
    transport.publish(`baton.v1.session.${sid}.events`, encodeReply(event, encoding), contentTypeHeaders(encoding));
  };

  it('yields the session’s events in order, decoding each in its own encoding, and ends on stop()', async () => {
    const client = new BatonClient(transport);
    const stream = client.events('sess-1');
    events.forEach((event, i) => publish(event, i % 2 === 0 ? 'msgpack' : 'json'));
    const got: PublishedEvent[] = [];
    for await (const event of stream) {
      got.push(event);
      if (got.length === events.length) stream.stop();
    }
    expect(got).toEqual(events);
  });

  it('reads an event published without a header in either encoding', async () => {
    const stream = new BatonClient(transport).events('sess-1');
    const event = { type: 'writer.queued', session_id: 'sess-1', at: AT };
    transport.publish('baton.v1.session.sess-1.events', encodeReply(event, 'json'));
    transport.publish('baton.v1.session.sess-1.events', encodeReply(event, 'msgpack'));
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual(event);
    expect((await iterator.next()).value).toEqual(event);
    await iterator.return?.();
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('skips invalid events and reports them to onInvalid', async () => {
    const invalid: unknown[] = [];
    const stream = new BatonClient(transport).events('sess-1', { onInvalid: (err) => invalid.push(err) });
    publish({ type: 'writer.exploded', session_id: 'sess-1', at: AT }, 'msgpack');
    transport.publish('baton.v1.session.sess-1.events', Uint8Array.of(0xc1));
    publish({ type: 'status', session_id: 'sess-1', at: AT, text: '' }, 'json');
    for await (const event of stream) {
      expect(event).toEqual({ type: 'status', session_id: 'sess-1', at: AT, text: '' });
      break;
    }
    expect(invalid).toHaveLength(2);
  });

  it('waitForEvent resolves with the first matching event of that session', async () => {
    const client = new BatonClient(transport);
    const settled = client.waitForEvent('sess-1', (e): e is Extract<PublishedEvent, { type: 'writer.settled' }> => e.type === 'writer.settled');
    publish({ type: 'writer.settled', session_id: 'other', at: AT, writer_id: 'x', outcome: 'success', watermark: null }, 'msgpack', 'other');
    publish({ type: 'writer.queued', session_id: 'sess-1', at: AT }, 'msgpack');
    publish({ type: 'writer.settled', session_id: 'sess-1', at: AT, writer_id: 'w1', outcome: 'cancelled', watermark: null }, 'msgpack');
    const event = await settled;
    expect([event.writer_id, event.outcome]).toEqual(['w1', 'cancelled']);
  });

  it('waitForEvent rejects with a timeout TransportError when nothing matches', async () => {
    const client = new BatonClient(transport);
    const waiting = client.waitForEvent('sess-1', (e) => e.type === 'rebuild.completed', 50);
    publish({ type: 'writer.queued', session_id: 'sess-1', at: AT }, 'msgpack');
    await expect(waiting).rejects.toMatchObject({ name: 'TransportError', code: 'timeout' });
  });
});
