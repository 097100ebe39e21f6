import { WriterEventSchema, WriterInputSchema, type WriterContext, type WriterEvent } from '@baton/actors';
import { WriterTriggerSchema } from '@baton/protocol';
import { z } from 'zod';
import type { AppendOf, RecordOf, StoredOf } from './record-stream.ts';

/** Every writer record carries the id of the worker thread that produced it. */
const Thread = z.object({ thread: z.number().int().nonnegative() });

type WriterEventInput = z.input<typeof WriterEventSchema>;
type PayloadOf<T extends WriterEvent['type']> = z.ZodType<
  Omit<Extract<WriterEvent, { type: T }>, 'type'> & z.output<typeof Thread>,
  Omit<Extract<WriterEventInput, { type: T }>, 'type'> & z.input<typeof Thread>
>;

/** The payload of a writer machine input in the log: the event without its `type`, plus the worker's thread id. */
function eventPayload<T extends WriterEvent['type']>(type: T, extra: z.ZodObject = z.object({})): PayloadOf<T> {
  const option = WriterEventSchema.options.find((o) => o.shape.type.value === type);
  if (option === undefined) throw new Error(`no writer event ${type}`);
  return (option as z.ZodObject).omit({ type: true }).extend(Thread.shape).extend(extra.shape) as unknown as PayloadOf<T>;
}

/** Every record type of a `writer/<writer-id>` stream and its payload. */
export const WRITER_RECORDS = {
  /** First record: the machine input and what the writer was started with. */
  'writer.started': z.object({
    input: WriterInputSchema,
    projectId: z.string(),
    model: z.string(),
    trigger: WriterTriggerSchema,
    watermark: z.string().nullable(),
    /** Messages of the request prefix (system messages included). */
    prefixMessages: z.number().int().nonnegative(),
    thread: z.number().int().nonnegative(),
  }),
  'writer.prepared': eventPayload('writer.prepared'),
  'writer.prepare_failed': eventPayload('writer.prepare_failed'),
  'model.replied': eventPayload('model.replied'),
  'model.failed': eventPayload('model.failed'),
  'tools.completed': eventPayload('tools.completed'),
  'validation.completed': eventPayload('validation.completed'),
  /** `conflicts`: shared memory files another writer committed since they were staged (left as they were). */
  'commit.completed': eventPayload('commit.completed', z.object({ conflicts: z.array(z.string()).optional() })),
  'commit.failed': eventPayload('commit.failed'),
  'writer.cancel': eventPayload('writer.cancel'),
  /** Derived: the writer machine's final state, written once it settled; replay checks it against its re-fold. */
  snapshot: z.object({
    state: z.object({
      value: z.unknown(),
      context: z.custom<WriterContext>((v) => typeof v === 'object' && v !== null && 'phase' in v, { message: 'expected a writer context' }),
    }),
    thread: z.number().int().nonnegative(),
  }),
} as const;

export type WriterRecordSchemas = typeof WRITER_RECORDS;
export type WriterRecord = RecordOf<WriterRecordSchemas>;
export type WriterRecordType = WriterRecord['type'];
export type WriterAppend = AppendOf<WriterRecordSchemas>;
export type StoredWriterRecord = StoredOf<WriterRecordSchemas>;

/** The record that logs a writer event consumed in worker thread `thread`. */
export function writerRecordOf(event: WriterEvent, thread: number): WriterRecord {
  const { type, ...payload } = event;
  // The payload of each writer event type is the event without its type, plus the thread (see `eventPayload`).
  return { type, payload: { ...payload, thread } } as WriterRecord;
}
