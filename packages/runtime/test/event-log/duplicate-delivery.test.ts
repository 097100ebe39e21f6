/**
 * Duplicate delivery (at-least-once senders): a random sequence of appends where messages are re-sent, split at
 * random into append calls and event-loop turns, must store exactly one record per distinct msgId per stream, in
 * first-arrival order, report the original seq for every re-send, and give identical results on both adapters.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppendInput, AppendResult, EventLog, StoredRecord } from '@baton/log-schema';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { MemoryEventLog } from '../../src/event-log/memory-event-log.ts';
import { jsonPayload } from './event-log-contract.ts';
import { makeTempDir, removeDir } from './temp-dir.ts';

const STREAMS = ['s1', 's2', 's3'] as const;
const MESSAGES = 12;

const scenarioArb = fc.record({
  messages: fc.array(fc.record({ stream: fc.constantFrom(...STREAMS), payload: jsonPayload }), {
    minLength: MESSAGES,
    maxLength: MESSAGES,
  }),
  deliveries: fc.array(
    fc.record({ msg: fc.nat({ max: MESSAGES - 1 }), newCall: fc.boolean(), newTurn: fc.boolean() }),
    { minLength: 1, maxLength: 60 },
  ),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

interface Call {
  readonly stream: string;
  readonly records: AppendInput[];
}

/** Splits the deliveries into turns of append calls (a call holds consecutive deliveries of one stream). */
function plan(s: Scenario, prefix: string): Call[][] {
  const turns: Call[][] = [];
  let turn: Call[] | undefined;
  let call: Call | undefined;
  for (const d of s.deliveries) {
    const m = s.messages[d.msg] as Scenario['messages'][number];
    const stream = prefix + m.stream;
    if (turn === undefined || d.newTurn) turns.push((turn = []));
    if (call === undefined || d.newCall || d.newTurn || call.stream !== stream) turn.push((call = { stream, records: [] }));
    call.records.push({ type: 'msg', at: d.msg, payload: m.payload, msgId: `m${d.msg}` });
  }
  return turns;
}

interface Trace {
  readonly results: AppendResult[][];
  readonly stored: Record<string, StoredRecord[]>;
}

async function run(log: EventLog, turns: Call[][], prefix: string): Promise<Trace> {
  const results: AppendResult[][] = [];
  for (const turn of turns) results.push(...(await Promise.all(turn.map((c) => log.append(c.stream, c.records)))));
  const stored: Record<string, StoredRecord[]> = {};
  for (const stream of log.streams(prefix)) stored[stream.slice(prefix.length)] = [...log.read(stream)];
  return { results, stored };
}

/** The reference: first arrival of a msgId in a stream takes the next seq; re-sends report it. */
function model(turns: Call[][]): { results: AppendResult[][]; order: Record<string, string[]> } {
  const seqs = new Map<string, Map<string, number>>();
  const order: Record<string, string[]> = {};
  const results = turns.flat().map((call) => {
    const stream = call.stream.replace(/^[^.]*\./, '');
    let ids = seqs.get(stream);
    if (ids === undefined) seqs.set(stream, (ids = new Map<string, number>()));
    return call.records.map((r) => {
      const msgId = r.msgId as string;
      const original = ids.get(msgId);
      if (original !== undefined) return { seq: original, duplicate: true };
      ids.set(msgId, ids.size + 1);
      (order[stream] ??= []).push(msgId);
      return { seq: ids.size, duplicate: false };
    });
  });
  return { results, order };
}

let dir: string;
let lmdb: LmdbEventLog;
let memory: MemoryEventLog;

beforeAll(() => {
  dir = makeTempDir();
  lmdb = LmdbEventLog.open({ path: dir });
  memory = new MemoryEventLog();
});

afterAll(async () => {
  await lmdb.close();
  await memory.close();
  removeDir(dir);
});

it('property: re-sent messages are stored once, in first-arrival order, identically on both adapters', async () => {
  let n = 0;
  await fc.assert(
    fc.asyncProperty(scenarioArb, async (scenario) => {
      const prefix = `run${++n}.`;
      const turns = plan(scenario, prefix);
      const [onLmdb, onMemory] = [await run(lmdb, turns, prefix), await run(memory, turns, prefix)];
      const reference = model(turns);

      expect(onLmdb.results).toEqual(reference.results);
      expect(onMemory.results).toEqual(onLmdb.results);
      expect(onMemory.stored).toEqual(onLmdb.stored);
      expect(Object.keys(onLmdb.stored).sort()).toEqual(Object.keys(reference.order).sort());
      for (const [stream, records] of Object.entries(onLmdb.stored)) {
        expect(records.map((r) => r.msgId)).toEqual(reference.order[stream]);
        expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
        for (const r of records) {
          const msg = scenario.messages[r.at] as Scenario['messages'][number];
          expect(r.stream).toBe(prefix + msg.stream);
          expect(r.msgId).toBe(`m${r.at}`);
        }
      }
    }),
    { numRuns: 100 },
  );
}, 120_000);
