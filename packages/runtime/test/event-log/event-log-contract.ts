/**
 * The event-log contract suite, run against every adapter (`describeEventLogContract(name, factory)`).
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppendInput, EventLog, StoredRecord } from '@baton/log-schema';

/** One location of a log. `open()` returns a log over that location (a durable adapter sees earlier data). */
export interface EventLogHarness {
  open(): EventLog;
  /** Whether data survives `close()` + `open()` (LMDB) or starts empty again (memory). */
  readonly durable: boolean;
  /** Arranges for the next commit of `log` to fail as a failed transaction would (nothing stored). */
  failNextCommit?(log: EventLog): void;
  dispose(): void;
}

export type EventLogFactory = () => EventLogHarness;

export const rec = (type: string, payload: unknown, msgId?: string, at = 1_750_000_000_000): AppendInput =>
  msgId === undefined ? { type, at, payload } : { type, at, payload, msgId };

/** What `read` must return for `input` stored at (stream, seq). */
export function expected(stream: string, seq: number, input: AppendInput): StoredRecord {
  const base = { v: 1 as const, type: input.type, at: input.at, payload: input.payload, stream, seq };
  return input.msgId === undefined ? base : { ...base, msgId: input.msgId };
}

/** msgpack stores -0 as the integer 0; everything else of a JSON value round-trips exactly. */
export function normalizeJson(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(normalizeJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalizeJson(v)]));
  }
  return value;
}

function hasProtoKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasProtoKey);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([k, v]) => k === '__proto__' || hasProtoKey(v));
  }
  return false;
}

/**
 * JSON payloads with full-Unicode strings. Excluded: lone surrogates (records are stored as UTF-8) and `__proto__`
 * keys (msgpackr decodes them as `__proto_`, a prototype-pollution guard).
 */
export const jsonPayload = fc.jsonValue({ maxDepth: 4, stringUnit: 'grapheme' }).filter((v) => !hasProtoKey(v));

const STREAMS = ['alpha', 'beta', 'gamma.one', 'gamma.two'] as const;

/** A batch: append calls issued in the same turn. */
export const batchesArb = fc.array(
  fc.array(
    fc.record({
      stream: fc.constantFrom(...STREAMS),
      records: fc.array(
        fc.record({ type: fc.string({ maxLength: 12 }), at: fc.integer({ min: 0, max: 2 ** 45 }), payload: jsonPayload }),
        { maxLength: 5 },
      ),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  { minLength: 1, maxLength: 5 },
);

export function describeEventLogContract(name: string, factory: EventLogFactory): void {
  describe(`EventLog contract: ${name}`, () => {
    let harness: EventLogHarness;
    let log: EventLog;
    const opened: EventLog[] = [];

    const openLog = (): EventLog => {
      const l = harness.open();
      opened.push(l);
      return l;
    };
    const reopen = async (): Promise<EventLog> => {
      await log.close();
      log = openLog();
      return log;
    };

    beforeEach(() => {
      harness = factory();
      log = openLog();
    });

    afterEach(async () => {
      for (const l of opened.splice(0)) await l.close();
      harness.dispose();
    });

    it('numbers each stream from 1 and reads records back in order with all fields', async () => {
      const inputs = [rec('a', { n: 1 }), rec('b', [1, 2], 'm-1'), rec('c', 'three')];
      expect(await log.append('s', inputs)).toEqual([
        { seq: 1, duplicate: false },
        { seq: 2, duplicate: false },
        { seq: 3, duplicate: false },
      ]);
      expect(await log.append('s', [rec('d', null)])).toEqual([{ seq: 4, duplicate: false }]);
      expect([...log.read('s')]).toEqual([...inputs, rec('d', null)].map((input, i) => expected('s', i + 1, input)));
      expect(log.lastSeq('s')).toBe(4);
    });

    it('keeps streams isolated', async () => {
      await Promise.all([
        log.append('one', [rec('x', 1), rec('x', 2)]),
        log.append('two', [rec('y', 1)]),
        log.append('one', [rec('x', 3)]),
      ]);
      expect(await log.append('two', [rec('y', 2)])).toEqual([{ seq: 2, duplicate: false }]);
      expect([...log.read('one')].map((r) => [r.stream, r.seq, r.payload])).toEqual([
        ['one', 1, 1],
        ['one', 2, 2],
        ['one', 3, 3],
      ]);
      expect([...log.read('two')].map((r) => [r.stream, r.seq, r.payload])).toEqual([
        ['two', 1, 1],
        ['two', 2, 2],
      ]);
      expect([...log.read('three')]).toEqual([]);
    });

    it('orders appends issued in the same turn by call order (one group commit)', async () => {
      const calls = Array.from({ length: 50 }, (_, i) => log.append('s', [rec('t', i), rec('t', i + 0.5)]));
      const results = await Promise.all(calls);
      expect(results.map((r) => r.map((x) => x.seq))).toEqual(Array.from({ length: 50 }, (_, i) => [2 * i + 1, 2 * i + 2]));
      expect([...log.read('s')].map((r) => r.payload)).toEqual(Array.from({ length: 50 }, (_, i) => [i, i + 0.5]).flat());
    });

    it('resolves appends asynchronously and counts only committed records in lastSeq', async () => {
      let settled = false;
      const pending = log.append('s', [rec('t', 1)]).then((r) => {
        settled = true;
        return r;
      });
      expect(log.lastSeq('s')).toBe(0);
      expect([...log.read('s')]).toEqual([]);
      await Promise.resolve();
      expect(settled).toBe(false);
      expect(await pending).toEqual([{ seq: 1, duplicate: false }]);
      expect(log.lastSeq('s')).toBe(1);
    });

    it('reads ranges with from / to / limit', async () => {
      await log.append('s', Array.from({ length: 10 }, (_, i) => rec('t', i + 1)));
      const seqs = (options?: Parameters<EventLog['read']>[1]): number[] => [...log.read('s', options)].map((r) => r.seq);
      expect(seqs()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(seqs({ from: 4 })).toEqual([4, 5, 6, 7, 8, 9, 10]);
      expect(seqs({ to: 3 })).toEqual([1, 2, 3]);
      expect(seqs({ from: 3, to: 5 })).toEqual([3, 4, 5]);
      expect(seqs({ from: 3, limit: 2 })).toEqual([3, 4]);
      expect(seqs({ from: 2, to: 9, limit: 3 })).toEqual([2, 3, 4]);
      expect(seqs({ from: 5, to: 5 })).toEqual([5]);
      expect(seqs({ from: 6, to: 5 })).toEqual([]);
      expect(seqs({ from: 11 })).toEqual([]);
      expect(seqs({ to: 100 })).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(seqs({ from: 0, to: 1 })).toEqual([1]);
      expect(seqs({ limit: 0 })).toEqual([]);
      // a read is re-iterable
      const range = log.read('s', { from: 9 });
      expect([...range].map((r) => r.seq)).toEqual([9, 10]);
      expect([...range].map((r) => r.seq)).toEqual([9, 10]);
    });

    it('reports lastSeq 0 for unknown streams', () => {
      expect(log.lastSeq('nope')).toBe(0);
    });

    it('lists streams in key order, filtered by prefix', async () => {
      await Promise.all(
        ['session.b', 'session.a', 'writer.x', 'session.a.sub', 'sessions', 'a'].map((s) => log.append(s, [rec('t', s)])),
      );
      expect([...log.streams()]).toEqual(['a', 'session.a', 'session.a.sub', 'session.b', 'sessions', 'writer.x']);
      expect([...log.streams('session.')]).toEqual(['session.a', 'session.a.sub', 'session.b']);
      expect([...log.streams('session')]).toEqual(['session.a', 'session.a.sub', 'session.b', 'sessions']);
      expect([...log.streams('writer.x')]).toEqual(['writer.x']);
      expect([...log.streams('zzz')]).toEqual([]);
    });

    it('stores a duplicate msgId within one call once and reports the original seq', async () => {
      const results = await log.append('s', [rec('t', 'first', 'm1'), rec('t', 'again', 'm1'), rec('t', 'other', 'm2')]);
      expect(results).toEqual([
        { seq: 1, duplicate: false },
        { seq: 1, duplicate: true },
        { seq: 2, duplicate: false },
      ]);
      expect([...log.read('s')].map((r) => r.payload)).toEqual(['first', 'other']);
    });

    it('detects duplicates across calls of the same batch and across batches', async () => {
      const [a, b] = await Promise.all([
        log.append('s', [rec('t', 'a', 'm1'), rec('t', 'b', 'm2')]),
        log.append('s', [rec('t', 'c', 'm2'), rec('t', 'd', 'm3')]),
      ]);
      expect(a).toEqual([
        { seq: 1, duplicate: false },
        { seq: 2, duplicate: false },
      ]);
      expect(b).toEqual([
        { seq: 2, duplicate: true },
        { seq: 3, duplicate: false },
      ]);
      expect(await log.append('s', [rec('t', 'e', 'm3'), rec('t', 'f', 'm1'), rec('t', 'g', 'm4')])).toEqual([
        { seq: 3, duplicate: true },
        { seq: 1, duplicate: true },
        { seq: 4, duplicate: false },
      ]);
      expect([...log.read('s')].map((r) => [r.seq, r.payload, r.msgId])).toEqual([
        [1, 'a', 'm1'],
        [2, 'b', 'm2'],
        [3, 'd', 'm3'],
        [4, 'g', 'm4'],
      ]);
      expect(log.lastSeq('s')).toBe(4);
    });

    it('scopes msgIds to their stream', async () => {
      expect(await log.append('s1', [rec('t', 1, 'same')])).toEqual([{ seq: 1, duplicate: false }]);
      expect(await log.append('s2', [rec('t', 2, 'same')])).toEqual([{ seq: 1, duplicate: false }]);
    });

    it('answers lookup keys of committed records per stream, not stored in the record, none for a duplicate', async () => {
      const pending = log.append('s', [{ ...rec('t', 1, 'm1'), keys: ['a', 'b'] }, { ...rec('t', 2), keys: ['z'] }]);
      expect(log.keySeq('s', 'a')).toBeUndefined();
      await pending;
      expect([log.keySeq('s', 'a'), log.keySeq('s', 'b'), log.keySeq('s', 'z'), log.keySeq('s', 'c'), log.keySeq('other', 'a')]).toEqual([1, 1, 2, undefined, undefined]);
      expect([...log.read('s')][0]).not.toHaveProperty('keys');
      await log.append('s', [{ ...rec('t', 'dup', 'm1'), keys: ['c'] }]);
      expect(log.keySeq('s', 'c')).toBeUndefined();
      await expect(log.append('s', [{ ...rec('t', 3), keys: [''] }])).rejects.toThrow(TypeError);
      await expect(log.append('s', [{ ...rec('t', 3), keys: ['x'.repeat(2000)] }])).rejects.toThrow(RangeError);
      expect(log.lastSeq('s')).toBe(2);
      // A later record registering a key takes it over.
      await log.append('s', [{ ...rec('t', 3), keys: ['z'] }]);
      expect(log.keySeq('s', 'z')).toBe(3);
      if (!harness.durable) return;
      await reopen();
      expect([log.keySeq('s', 'a'), log.keySeq('s', 'z'), log.keySeq('s', 'c')]).toEqual([1, 3, undefined]);
    });

    it('resolves an all-duplicate or empty append without storing anything', async () => {
      await log.append('s', [rec('t', 1, 'm1')]);
      const globalBefore = log.lastGlobalSeq?.();
      expect(await log.append('s', [rec('t', 1, 'm1')])).toEqual([{ seq: 1, duplicate: true }]);
      expect(await log.append('s', [])).toEqual([]);
      expect(log.lastSeq('s')).toBe(1);
      expect([...log.streams()]).toEqual(['s']);
      expect(log.lastGlobalSeq?.()).toBe(globalBefore);
    });

    it('round-trips values: nested objects, arrays, unicode strings, numbers, null, booleans', async () => {
      const payloads: unknown[] = [
        { nested: { deeper: { list: [1, 'two', { three: 3 }], empty: {}, none: [] } } },
        ['mixed', 1, -2.5, 1e-7, 2 ** 53 - 1, -(2 ** 31), 2 ** 32 + 1, 1_750_000_000_123, null, true, false],
        'héllo wörld — 日本語 — emoji 😀👩‍💻 — rtl עברית — combining é',
        '',
        0,
        -1,
        3.141592653589793,
        Number.MAX_VALUE,
        Number.MIN_VALUE,
        null,
        true,
        false,
        { 'key with spaces': 1, 'ключ': 'значение', '😀': ['🎉'], '': 'empty key' },
        'x'.repeat(100_000),
      ];
      const inputs = payloads.map((payload, i) => rec(`type-${i}-ü`, payload, i % 2 === 0 ? `msg-${i}-✓` : undefined, 1_750_000_000_000 + i));
      await log.append('unicode-stream-ß', inputs);
      expect([...log.read('unicode-stream-ß')]).toEqual(inputs.map((input, i) => expected('unicode-stream-ß', i + 1, input)));
    });

    it('rejects malformed appends without disturbing the other appends of the batch', async () => {
      const good = log.append('s', [rec('t', 1)]);
      const badStream = log.append('', [rec('t', 1)]);
      const badType = log.append('s', [{ type: 5, at: 1, payload: 1 } as unknown as AppendInput]);
      const badAt = log.append('s', [{ type: 't', at: Number.NaN, payload: 1 }]);
      const badPayload = log.append('s', [rec('t', 2), rec('t', Symbol('nope'))]);
      const badMsgId = log.append('s', [rec('t', 1, '')]);
      const good2 = log.append('s', [rec('t', 3)]);
      await expect(badStream).rejects.toThrow(TypeError);
      await expect(badType).rejects.toThrow(TypeError);
      await expect(badAt).rejects.toThrow(TypeError);
      await expect(badPayload).rejects.toThrow();
      await expect(badMsgId).rejects.toThrow(TypeError);
      expect(await good).toEqual([{ seq: 1, duplicate: false }]);
      expect(await good2).toEqual([{ seq: 2, duplicate: false }]);
      expect([...log.read('s')].map((r) => r.payload)).toEqual([1, 3]);
    });

    it('reads all streams in commit order through the global index', async () => {
      if (log.readGlobal === undefined || log.lastGlobalSeq === undefined) return;
      expect(log.lastGlobalSeq()).toBe(0);
      await Promise.all([log.append('b', [rec('t', 'b1'), rec('t', 'b2')]), log.append('a', [rec('t', 'a1')])]);
      await log.append('b', [rec('t', 'b3')]);
      expect(log.lastGlobalSeq()).toBe(4);
      expect([...log.readGlobal()].map((r) => [r.globalSeq, r.stream, r.seq, r.payload])).toEqual([
        [1, 'b', 1, 'b1'],
        [2, 'b', 2, 'b2'],
        [3, 'a', 1, 'a1'],
        [4, 'b', 3, 'b3'],
      ]);
      expect([...log.readGlobal(3)].map((r) => r.globalSeq)).toEqual([3, 4]);
      expect([...log.readGlobal(2, { limit: 1 })].map((r) => r.payload)).toEqual(['b2']);
      expect([...log.readGlobal(5)]).toEqual([]);
    });

    it('close waits for pending appends; later appends reject', async () => {
      const pending = log.append('s', [rec('t', 1)]);
      await log.close();
      expect(await pending).toEqual([{ seq: 1, duplicate: false }]);
      await expect(log.append('s', [rec('t', 2)])).rejects.toThrow(/closed/);
    });

    it('rejects every append of a failed commit and reuses nothing of it', async () => {
      if (harness.failNextCommit === undefined) return;
      await log.append('s', [rec('t', 'kept', 'm0')]);
      harness.failNextCommit(log);
      const failing = [log.append('s', [rec('t', 'lost', 'm1')]), log.append('other', [rec('t', 'lost')])];
      for (const p of failing) await expect(p).rejects.toThrow();
      expect(log.lastSeq('s')).toBe(1);
      expect(log.lastSeq('other')).toBe(0);
      expect([...log.streams()]).toEqual(['s']);
      // the same msgId is not a duplicate: nothing of the failed batch was stored; seqs continue without a gap
      expect(await log.append('s', [rec('t', 'retry', 'm1')])).toEqual([{ seq: 2, duplicate: false }]);
      expect(await log.append('other', [rec('t', 'retry')])).toEqual([{ seq: 1, duplicate: false }]);
      expect([...log.read('s')].map((r) => r.payload)).toEqual(['kept', 'retry']);
      if (log.readGlobal) expect([...log.readGlobal()].map((r) => r.globalSeq)).toEqual([1, 2, 3]);
    });

    it('keeps data, heads and msgIds across close and reopen (durable adapters)', async () => {
      if (!harness.durable) return;
      await log.append('s', [rec('t', 1, 'm1'), rec('t', 2, 'm2')]);
      await log.append('other', [rec('t', 'o')]);
      const before = [...log.read('s')];
      await reopen();
      expect([...log.read('s')]).toEqual(before);
      expect(log.lastSeq('s')).toBe(2);
      expect([...log.streams()]).toEqual(['other', 's']);
      expect(await log.append('s', [rec('t', 'dup', 'm2'), rec('t', 3, 'm3')])).toEqual([
        { seq: 2, duplicate: true },
        { seq: 3, duplicate: false },
      ]);
      expect(log.lastGlobalSeq?.()).toBe(4);
      await reopen();
      expect(await log.append('s', [rec('t', 'dup', 'm1'), rec('t', 4)])).toEqual([
        { seq: 1, duplicate: true },
        { seq: 4, duplicate: false },
      ]);
      expect([...log.read('s')].map((r) => r.payload)).toEqual([1, 2, 3, 4]);
      if (log.readGlobal) expect([...log.readGlobal()].map((r) => [r.stream, r.seq])).toEqual([['s', 1], ['s', 2], ['other', 1], ['s', 3], ['s', 4]]);
    });

    it('property: random batches of records round-trip exactly through append + read', async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(batchesArb, async (batches) => {
          // one log for all runs; each run writes its own streams (`run<n>.<name>`)
          const prefix = `run${++run}.`;
          const model = new Map<string, AppendInput[]>();
          for (const batch of batches) {
            const results = await Promise.all(batch.map((call) => log.append(prefix + call.stream, call.records)));
            batch.forEach((call, i) => {
              const stream = prefix + call.stream;
              const stored = model.get(stream) ?? [];
              expect(results[i]).toEqual(call.records.map((_, j) => ({ seq: stored.length + j + 1, duplicate: false })));
              stored.push(...call.records);
              model.set(stream, stored);
            });
          }
          for (const [stream, inputs] of model) {
            expect(log.lastSeq(stream)).toBe(inputs.length);
            expect([...log.read(stream)]).toEqual(
              inputs.map((input, i) => expected(stream, i + 1, { ...input, payload: normalizeJson(input.payload) })),
            );
          }
          const nonEmpty = [...model].filter(([, inputs]) => inputs.length > 0).map(([stream]) => stream);
          expect([...log.streams(prefix)]).toEqual(nonEmpty.sort());
        }),
        { numRuns: 100 },
      );
    }, 120_000);
  });
}

