import type { z } from 'zod';
import type { AppendInput, StoredRecord } from './event-log.ts';
import { LogRecordError } from './log-record-error.ts';

/** The payload schema of every record type a stream may hold. */
export type PayloadSchemas = Readonly<Record<string, z.ZodType>>;

/**
 * A record of a stream as it is written: its type and the payload that type requires. Payloads are typed by what the
 * writer must supply (the schema's input: fields with a default may be absent in older records).
 */
export type RecordOf<S extends PayloadSchemas> = {
  [K in keyof S & string]: { readonly type: K; readonly payload: z.input<S[K]> };
}[keyof S & string];

/** A typed record to append: `at` from the caller's clock, `msgId` for idempotency, `keys` for lookups. */
export type AppendOf<S extends PayloadSchemas> = RecordOf<S> & { readonly at: number; readonly msgId?: string; readonly keys?: readonly string[] };

/** A stored record of the stream, validated against its type's schema (the payload object is the stored one). */
export type StoredOf<S extends PayloadSchemas> = RecordOf<S> & Omit<StoredRecord, 'type' | 'payload'>;

/** Checks a stored record against its stream's schemas; returns it typed, or throws `LogRecordError`. */
export function checkRecord<S extends PayloadSchemas>(schemas: S, record: StoredRecord): StoredOf<S> {
  const schema = Object.hasOwn(schemas, record.type) ? schemas[record.type] : undefined;
  if (schema === undefined) throw new LogRecordError(record.stream, record.seq, record.type, [`unknown record type ${record.type}`]);
  // Validated, never reshaped: payloads keep the exact objects that were stored (fork mode replays the agent's bytes).
  const result = schema.safeParse(record.payload);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`);
    throw new LogRecordError(record.stream, record.seq, record.type, issues);
  }
  return record as StoredOf<S>;
}

/** Turns typed records into the log's append inputs. */
export function toAppendInputs<S extends PayloadSchemas>(records: readonly AppendOf<S>[]): AppendInput[] {
  return records.map((r) => ({
    type: r.type,
    at: r.at,
    payload: r.payload,
    ...(r.msgId !== undefined ? { msgId: r.msgId } : {}),
    ...(r.keys !== undefined ? { keys: r.keys } : {}),
  }));
}

/** Checks records about to be appended (records that crossed a thread boundary). Throws `LogRecordError` (seq 0). */
export function checkAppendInputs<S extends PayloadSchemas>(schemas: S, stream: string, records: readonly AppendInput[]): AppendOf<S>[] {
  for (const r of records) checkRecord(schemas, { ...r, v: 1, stream, seq: 0 });
  return records as AppendOf<S>[];
}
