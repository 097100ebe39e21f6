import {
  WriterEventSchema,
  foldEvent,
  foldStart,
  writerMachine,
  type WriterEffect,
  type WriterEvent,
  type WriterInput,
} from '@baton/actors';
import {
  LogRecordError,
  WRITER_RECORDS,
  checkRecord,
  type StoredRecord,
  type StoredWriterRecord,
} from '@baton/log-schema';
import type { SnapshotFrom } from 'xstate';
import type { Divergence } from './divergence.ts';
import { firstDifference } from './plain-diff.ts';

export type SettleEffect = Extract<WriterEffect, { kind: 'settle' }>;

/** Result of folding one writer stream through `writerMachine`. */
export interface WriterRefold {
  readonly writerId: string;
  readonly stream: string;
  /** `writer.started` payload input; null when the stream is empty. */
  readonly input: WriterInput | null;
  /** Records folded after `writer.started`. */
  readonly events: number;
  /** The settle effect the replay produced, with the seq of the record whose fold produced it. */
  readonly settle: { readonly effect: SettleEffect; readonly seq: number } | null;
  readonly divergence: Divergence | null;
}

/**
 * The writer event a logged record stands for: `{ type, ...payload }` without what the log adds around the event (the
 * worker's `thread`, a commit's `conflicts`), or null for `writer.started`, which is the machine's input.
 */
export function writerEventOf(record: StoredWriterRecord): WriterEvent | null {
  if (record.type === 'writer.started' || record.type === 'snapshot') return null;
  return WriterEventSchema.parse({ ...record.payload, type: record.type });
}

/**
 * Re-folds a writer stream: record 1 (`writer.started`) gives the machine input, every later record is folded as the
 * event it logged. Reports a record that does not match its schema, or one that follows the settlement.
 */
export function refoldWriter(writerId: string, stream: string, records: readonly StoredRecord[]): WriterRefold {
  const base = { writerId, stream };
  const first = records[0];
  if (first === undefined) return { ...base, input: null, events: 0, settle: null, divergence: null };
  const diverge = (record: StoredRecord, reason: string, expected: unknown, actual: unknown, input: WriterInput | null = null): WriterRefold => ({
    ...base,
    input,
    events: 0,
    settle: null,
    divergence: { stream, seq: record.seq, reason, path: null, expected, actual },
  });
  const check = (record: StoredRecord): StoredWriterRecord | string => {
    try {
      return checkRecord(WRITER_RECORDS, record);
    } catch (err) {
      if (err instanceof LogRecordError) return err.message;
      throw err;
    }
  };
  const started = check(first);
  if (typeof started === 'string' || started.type !== 'writer.started') {
    return diverge(first, 'the first record of a writer stream must be writer.started with a valid input', 'writer.started', { type: first.type, payload: first.payload });
  }
  // Fold the input as logged (the live fold used that very value), validated but not reshaped by the schema.
  const input = started.payload.input;
  const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input);
  let snapshot: SnapshotFrom<typeof writerMachine> = start.snapshot;
  let settle: WriterRefold['settle'] = settleOf(start.effects, first.seq);
  let events = 0;
  for (const raw of records.slice(1)) {
    const record = check(raw);
    if (typeof record !== 'string' && record.type === 'snapshot') {
      // The writer's recorded final state must be the state its events re-fold to.
      const expected = { value: snapshot.value, context: snapshot.context };
      const path = firstDifference(expected, record.payload.state);
      if (path !== null) return { ...diverge(raw, 'the writer snapshot differs from the re-folded state', expected, record.payload.state, input), divergence: { stream, seq: raw.seq, reason: 'the writer snapshot differs from the re-folded state', path, expected, actual: record.payload.state } };
      continue;
    }
    const event = typeof record === 'string' ? null : writerEventOf(record);
    if (typeof record === 'string' || event === null) {
      return diverge(raw, `record ${raw.type} is not a valid writer event${typeof record === 'string' ? `: ${record}` : ''}`, 'a writer event', { type: raw.type, payload: raw.payload }, input);
    }
    if (snapshot.status === 'done') {
      return diverge(raw, 'record after the writer had settled', 'no further records', event, input);
    }
    const step = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, snapshot, event);
    snapshot = step.snapshot;
    events++;
    settle = settle ?? settleOf(step.effects, raw.seq);
  }
  return { ...base, input, events, settle, divergence: null };
}

function settleOf(effects: readonly WriterEffect[], seq: number): WriterRefold['settle'] {
  const effect = effects.find((e): e is SettleEffect => e.kind === 'settle');
  return effect === undefined ? null : { effect, seq };
}
