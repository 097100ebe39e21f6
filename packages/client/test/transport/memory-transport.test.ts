import { describe, expect, it } from 'vitest';
import { MemoryBus, MemoryTransport } from '../../src/transport/memory-transport.ts';
import { describeTransportContract } from './transport-contract.ts';

const MAX_PAYLOAD = 64 * 1024;
const bus = new MemoryBus({ maxPayload: MAX_PAYLOAD });

describeTransportContract('memory', () => ({
  connect: () => Promise.resolve(bus.connect()),
  maxPayload: MAX_PAYLOAD,
}));

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('MemoryTransport specifics', () => {
  it('defaults to NATS’ 1 MiB max payload and a private bus', async () => {
    const t = new MemoryTransport();
    expect(t.maxPayload).toBe(1024 * 1024);
    await t.close();
  });

  it('rotates queue group members round-robin, so tests are deterministic', async () => {
    const b = new MemoryBus();
    const t = b.connect();
    const got: string[] = [];
    t.subscribe('q', () => got.push('a'), { queue: 'g' });
    t.subscribe('q', () => got.push('b'), { queue: 'g' });
    for (let i = 0; i < 4; i++) t.publish('q', text(''));
    await t.flush();
    expect(got).toEqual(['a', 'b', 'a', 'b']);
    await t.close();
  });

  it('gives every receiver its own copy of the data', async () => {
    const t = new MemoryTransport();
    const received: Uint8Array[] = [];
    t.subscribe('copy', (msg) => received.push(msg.data));
    t.subscribe('copy', (msg) => received.push(msg.data));
    const data = text('abc');
    t.publish('copy', data);
    data[0] = 0;
    await t.flush();
    const first = received[0];
    if (first !== undefined) first[1] = 0;
    expect(received.map((d) => new TextDecoder().decode(d))).toEqual(['a\u0000c', 'abc']);
    await t.close();
  });

  it('reports a throwing handler and keeps delivering', async () => {
    const errors: string[] = [];
    const t = new MemoryBus({ onHandlerError: (err, subject) => errors.push(`${subject}:${String(err)}`) }).connect();
    const seen: string[] = [];
    t.subscribe('boom', (msg) => {
      if (msg.data[0] === 1) throw new Error('bad');
      seen.push('ok');
    });
    t.publish('boom', Uint8Array.of(1));
    t.publish('boom', Uint8Array.of(2));
    await t.flush();
    expect(errors).toEqual(['boom:Error: bad']);
    expect(seen).toEqual(['ok']);
    await t.close();
  });

  it.each(['', 'a..b', 'a b', '.a', 'a.'])('refuses the subject %j', async (subject) => {
    const t = new MemoryTransport();
    expect(() => t.subscribe(subject, () => {})).toThrow(TypeError);
    expect(() => t.publish(subject, text(''))).toThrow(TypeError);
    await t.close();
  });

  it('refuses wildcards in publish subjects and a > that is not last', async () => {
    const t = new MemoryTransport();
    expect(() => t.publish('a.*', text(''))).toThrow(TypeError);
    expect(() => t.publish('a.>', text(''))).toThrow(TypeError);
    expect(() => t.subscribe('a.>.b', () => {})).toThrow(TypeError);
    expect(() => t.subscribe('a.b*', () => {})).toThrow(TypeError);
    await t.close();
  });

  it('fails requests still pending at close with closed', async () => {
    const t = new MemoryTransport();
    t.subscribe('never', () => {});
    const pending = t.request('never', text(''), { timeoutMs: 60_000 });
    await t.close();
    await expect(pending).rejects.toMatchObject({ code: 'closed' });
  });
});
