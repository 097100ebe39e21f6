import { afterEach, describe, expect, it } from 'vitest';
import { messageSize } from '../../src/transport/payload-size.ts';
import { TransportError, type TransportErrorCode } from '../../src/transport/transport-error.ts';
import type { InboundMessage, Transport } from '../../src/transport/transport.ts';

/** How the suite gets connections: every call is a new connection to the same server (or bus). */
export interface TransportContractHarness {
  connect(): Promise<Transport>;
  /** The `max_payload` the server (or bus) was configured with. */
  readonly maxPayload: number;
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const str = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Waits until `publisher`'s messages reached the server and the subscribers' connections processed them. */
async function settle(publisher: Transport, ...subscribers: Transport[]): Promise<void> {
  await publisher.flush();
  for (const sub of subscribers) await sub.flush();
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

async function rejection(promise: Promise<unknown>): Promise<TransportErrorCode> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TransportError);
    return (err as TransportError).code;
  }
  throw new Error('resolved');
}

function thrown(fn: () => unknown): TransportErrorCode {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TransportError);
    return (err as TransportError).code;
  }
  throw new Error('did not throw');
}

/**
 * The behaviour every `Transport` adapter must have (NATS core semantics). `harness()` is read inside the tests, so
 * it may depend on a server started in the caller's `beforeAll`.
 */
export function describeTransportContract(name: string, harness: () => TransportContractHarness): void {
  describe(`${name} transport contract`, () => {
    const open: Transport[] = [];
    const connect = async (): Promise<Transport> => {
      const t = await harness().connect();
      open.push(t);
      return t;
    };

    afterEach(async () => {
      await Promise.all(open.splice(0).map((t) => t.close()));
    });

    it('reports the configured max payload', async () => {
      expect((await connect()).maxPayload).toBe(harness().maxPayload);
    });

    it('answers a request through a subscriber on another connection', async () => {
      const [server, client] = [await connect(), await connect()];
      server.subscribe('svc.echo', (msg) => msg.respond(text(`echo:${str(msg.data)}`)));
      await server.flush();
      const reply = await client.request('svc.echo', text('ping'), { timeoutMs: 2_000 });
      expect(str(reply.data)).toBe('echo:ping');
      expect(reply.headers).toEqual({});
    });

    it('carries request and reply headers both ways, keys as sent', async () => {
      const [server, client] = [await connect(), await connect()];
      let seen: InboundMessage | undefined;
      server.subscribe('svc.hdr', (msg) => {
        seen = msg;
        msg.respond(text('ok'), { 'content-type': 'application/json', 'X-Trace': 'r-1' });
      });
      await server.flush();
      const reply = await client.request('svc.hdr', text('{}'), {
        timeoutMs: 2_000,
        headers: { 'content-type': 'application/json', 'X-Request-Id': 'abc' },
      });
      expect(seen?.headers).toEqual({ 'content-type': 'application/json', 'X-Request-Id': 'abc' });
      expect(seen?.reply).toEqual(expect.any(String));
      expect(reply.headers).toEqual({ 'content-type': 'application/json', 'X-Trace': 'r-1' });
    });

    it('delivers binary payloads byte for byte', async () => {
      const [server, client] = [await connect(), await connect()];
      server.subscribe('svc.bytes', (msg) => msg.respond(msg.data));
      await server.flush();
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      expect([...(await client.request('svc.bytes', all, { timeoutMs: 2_000 })).data]).toEqual([...all]);
    });

    it('gives each message of a queue group to exactly one member', async () => {
      const [a, b, plain, publisher] = [await connect(), await connect(), await connect(), await connect()];
      const got: string[] = [];
      const everything: string[] = [];
      a.subscribe('work.items', (msg) => got.push(`a:${str(msg.data)}`), { queue: 'workers' });
      b.subscribe('work.items', (msg) => got.push(`b:${str(msg.data)}`), { queue: 'workers' });
      plain.subscribe('work.items', (msg) => everything.push(str(msg.data)));
      await settle(a, b, plain);
      for (let i = 0; i < 20; i++) publisher.publish('work.items', text(String(i)));
      await settle(publisher, a, b, plain);
      await until(() => got.length >= 20 && everything.length >= 20, 'all deliveries');
      const items = got.map((g) => g.slice(2)).sort((x, y) => Number(x) - Number(y));
      expect(items).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
      expect(everything).toHaveLength(20);
    });

    it('matches * and > wildcards like NATS', async () => {
      const [sub, publisher] = [await connect(), await connect()];
      const star: string[] = [];
      const tail: string[] = [];
      sub.subscribe('w.*.c', (msg) => star.push(msg.subject));
      sub.subscribe('w.>', (msg) => tail.push(msg.subject));
      await sub.flush();
      for (const subject of ['w.b.c', 'w.x.c', 'w.b', 'w.b.c.d', 'w', 'v.b.c']) publisher.publish(subject, text(''));
      publisher.publish('w.end.end', text(''));
      await settle(publisher, sub);
      await until(() => tail.includes('w.end.end'), 'the last message');
      expect(star).toEqual(['w.b.c', 'w.x.c']);
      expect(tail).toEqual(['w.b.c', 'w.x.c', 'w.b', 'w.b.c.d', 'w.end.end']);
    });

    it('keeps publish order for one subscriber', async () => {
      const [sub, publisher] = [await connect(), await connect()];
      const seen: number[] = [];
      sub.subscribe('seq.test', (msg) => seen.push(Number(str(msg.data))));
      await sub.flush();
      for (let i = 0; i < 200; i++) publisher.publish('seq.test', text(String(i)));
      await settle(publisher, sub);
      await until(() => seen.length >= 200, '200 messages');
      expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => i));
    });

    it('delivers asynchronously, never inside publish', async () => {
      const t = await connect();
      let called = false;
      t.subscribe('async.check', () => {
        called = true;
      });
      await t.flush();
      t.publish('async.check', text('x'));
      expect(called).toBe(false);
      await t.flush();
      await until(() => called, 'delivery');
    });

    it('stops delivering after unsubscribe', async () => {
      const t = await connect();
      const seen: string[] = [];
      const sub = t.subscribe('unsub.test', (msg) => seen.push(str(msg.data)));
      await t.flush();
      t.publish('unsub.test', text('1'));
      await settle(t);
      await until(() => seen.length === 1, 'first message');
      sub.unsubscribe();
      await t.flush();
      t.publish('unsub.test', text('2'));
      expect(await rejection(t.request('unsub.test', text('3'), { timeoutMs: 2_000 }))).toBe('no_responders');
      expect(seen).toEqual(['1']);
    });

    it('rejects a request nobody subscribes to with no_responders', async () => {
      const t = await connect();
      expect(await rejection(t.request('nobody.home', text('x'), { timeoutMs: 2_000 }))).toBe('no_responders');
    });

    it('rejects a request nobody answers with timeout', async () => {
      const [server, client] = [await connect(), await connect()];
      server.subscribe('svc.silent', () => {});
      await server.flush();
      const error = await client.request('svc.silent', text('x'), { timeoutMs: 150 }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(TransportError);
      expect((error as TransportError).code).toBe('timeout');
      expect((error as TransportError).retryable).toBe(true);
    });

    it('accepts a message of exactly max payload, headers included, and refuses one byte more', async () => {
      const [server, client] = [await connect(), await connect()];
      const max = harness().maxPayload;
      const headers = { 'content-type': 'application/json' };
      // NATS counts the header block: "NATS/1.0\r\n" (10) + "content-type: application/json\r\n" (32) + "\r\n" (2).
      const headerBlock = 44;
      expect(messageSize(new Uint8Array(0), headers)).toBe(headerBlock);
      const fits = new Uint8Array(max - headerBlock);
      server.subscribe('svc.size', (msg) => msg.respond(text(String(msg.data.length))));
      await server.flush();
      expect(str((await client.request('svc.size', fits, { timeoutMs: 5_000, headers })).data)).toBe(String(fits.length));
      const over = new Uint8Array(fits.length + 1);
      expect(await rejection(client.request('svc.size', over, { timeoutMs: 2_000, headers }))).toBe('too_large');
      expect(thrown(() => client.publish('svc.size', over, headers))).toBe('too_large');
      expect(thrown(() => client.publish('svc.size', new Uint8Array(max + 1)))).toBe('too_large');
      client.publish('svc.size', new Uint8Array(max));
    });

    it('lets a responder catch too_large on respond and answer with something smaller', async () => {
      const [server, client] = [await connect(), await connect()];
      const max = harness().maxPayload;
      server.subscribe('svc.big', (msg) => {
        try {
          msg.respond(new Uint8Array(max + 1));
        } catch (err) {
          msg.respond(text(err instanceof TransportError ? err.code : 'other'));
        }
      });
      await server.flush();
      expect(str((await client.request('svc.big', text('x'), { timeoutMs: 2_000 })).data)).toBe('too_large');
    });

    it('refuses work after close, stops its subscriptions, and closes idempotently', async () => {
      const [closing, other] = [await connect(), await connect()];
      const seen: string[] = [];
      closing.subscribe('close.test', (msg) => seen.push(str(msg.data)));
      other.subscribe('close.test', () => {});
      await settle(closing, other);
      await closing.close();
      await closing.close();
      expect(thrown(() => closing.publish('close.test', text('x')))).toBe('closed');
      expect(await rejection(closing.request('close.test', text('x'), { timeoutMs: 2_000 }))).toBe('closed');
      expect(thrown(() => closing.subscribe('close.other', () => {}))).toBe('closed');
      other.publish('close.test', text('after'));
      await settle(other);
      expect(seen).toEqual([]);
    });

    it('drains on close: messages already received still reach the handler, which can still respond', async () => {
      const [server, client] = [await connect(), await connect()];
      let served = 0;
      server.subscribe('svc.drain', (msg) => {
        served++;
        msg.respond(text('late'));
      });
      await server.flush();
      const pending = client.request('svc.drain', text('x'), { timeoutMs: 2_000 });
      await client.flush();
      await server.close();
      expect(str((await pending).data)).toBe('late');
      expect(served).toBe(1);
    });
  });
}
