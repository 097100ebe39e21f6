import {
  WriterEventSchema,
  WriterInputSchema,
  foldEvent,
  foldStart,
  writerMachine,
  type WriterEffect,
  type WriterEvent,
  type WriterInput,
} from '@baton/actors';
import type { SnapshotFrom } from 'xstate';
import type { StoredRecord } from '@baton/log-schema';
import type { Divergence } from './divergence.ts';

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

/** The writer event a logged record stands for: `{ type, ...payload }` without the worker's `thread`. */
export function writerEventOf(record: StoredRecord): Record<string, unknown> {
  const { thread: _thread, ...rest } = (record.payload ?? {}) as Record<string, unknown>;
  return { ...rest, type: record.type };
}

/**
 * Re-folds a writer stream: record 1 (`writer.started`) gives the machine input, every later record is folded as the
 * event it logged. Reports a record that is not a valid writer event, or one that follows the settlement.
 */
export function refoldWriter(writerId: string, stream: string, records: readonly StoredRecord[]): WriterRefold {
  const base = { writerId, stream };
  const first = records[0];
  if (first === undefined) return { ...base, input: null, events: 0, settle: null, divergence: null };
  const diverge = (record: StoredRecord, reason: string, expected: unknown, actual: unknown): WriterRefold => ({
    ...base,
    input: null,
    events: 0,
    settle: null,
    divergence: { stream, seq: record.seq, reason, path: null, expected, actual },
  });
  const parsedInput = WriterInputSchema.safeParse((first.payload as { input?: unknown } | null)?.input);
  if (first.type !== 'writer.started' || !parsedInput.success) {
    return diverge(first, 'the first record of a writer stream must be writer.started with a valid input', 'writer.started', { type: first.type, payload: first.payload });
  }
  // Fold the input as logged (the live fold used that very value), validated but not reshaped by the schema.
  const input = (first.payload as { input: WriterInput }).input;
  const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input);
  let snapshot: SnapshotFrom<typeof writerMachine> = start.snapshot;
  let settle: WriterRefold['settle'] = settleOf(start.effects, first.seq);
  let events = 0;
  for (const record of records.slice(1)) {
    const event = writerEventOf(record);
    if (!WriterEventSchema.safeParse(event).success) {
      return { ...diverge(record, `record ${record.type} is not a valid writer event`, 'a writer event', event), input };
    }
    if (snapshot.status === 'done') {
      return { ...diverge(record, 'record after the writer had settled', 'no further records', event), input };
    }
    const step = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, snapshot, event as WriterEvent);
    snapshot = step.snapshot;
    events++;
    settle = settle ?? settleOf(step.effects, record.seq);
  }
  return { ...base, input, events, settle, divergence: null };
}

function settleOf(effects: readonly WriterEffect[], seq: number): WriterRefold['settle'] {
  const effect = effects.find((e): e is SettleEffect => e.kind === 'settle');
  return effect === undefined ? null : { effect, seq };
}
