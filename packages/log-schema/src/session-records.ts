import {
  FailureSchema,
  MessageIndexEntrySchema,
  SessionEventSchema,
  type SessionEffect,
  type SessionEvent,
} from '@baton/actors';
import { MessageSchema, OpenRequestSchema, WriterSlotSchema } from '@baton/protocol';
import { z } from 'zod';
import type { AppendOf, RecordOf, StoredOf } from './record-stream.ts';
import { SessionSetupSchema } from './session-setup.ts';

type SessionEventInput = z.input<typeof SessionEventSchema>;
type PayloadOf<T extends SessionEvent['type']> = z.ZodType<
  Omit<Extract<SessionEvent, { type: T }>, 'type'>,
  Omit<Extract<SessionEventInput, { type: T }>, 'type'>
>;

/** The payload of a machine input in the log: the event without its `type` (which is the record's type). */
function inputPayload<T extends SessionEvent['type']>(type: T): PayloadOf<T> {
  const option = SessionEventSchema.options.find((o) => o.shape.type.value === type);
  if (option === undefined) throw new Error(`no session event ${type}`);
  return (option as z.ZodObject).omit({ type: true }) as unknown as PayloadOf<T>;
}

/** What the worker attaches to a finished rebuild: the boundary message it inserted and the cleared tool outputs. */
const RebuiltContextFields = {
  message: MessageSchema.optional(),
  cleared: z.array(z.string()).optional(),
  clearedText: z.string().optional(),
  tokens: z.number().int().nonnegative().optional(),
  sections: z.array(z.object({ name: z.string(), tokens: z.number().int().nonnegative() })).optional(),
};

/** An effect as a decision records it (checked for its `kind`; replay compares the rest field by field). */
const EffectSchema = z.custom<SessionEffect>((v) => typeof v === 'object' && v !== null && typeof (v as { kind?: unknown }).kind === 'string', {
  message: 'expected an effect with a kind',
});

/** The session summary a decision records (fields added by later versions are optional when read back). */
export const DecisionStateSchema = z.object({
  value: z.unknown(),
  tokens: z.number(),
  usableWindow: z.number(),
  nextThreshold: z.number().nullable(),
  watermark: z.string().nullable(),
  writer: WriterSlotSchema,
  writerId: z.string().nullable(),
  overflow: z.boolean(),
  closed: z.boolean(),
  closing: z.boolean(),
  rebuilding: z.boolean(),
  rebuildRequestId: z.string().nullable().optional(),
  lastOutcome: z
    .object({ writerId: z.string(), outcome: z.string(), failure: FailureSchema.nullable(), reason: z.string().nullable() })
    .nullable()
    .optional(),
});
export type DecisionState = z.infer<typeof DecisionStateSchema>;

/** Every record type of a `session/<sid>` stream and its payload. */
export const SESSION_RECORDS = {
  /** First record: the setup the session machine starts from, the reply encoding, and the request as received. */
  'session.opened': z.object({ setup: SessionSetupSchema, encoding: z.enum(['msgpack', 'json']), request: OpenRequestSchema }),
  /** Messages as the agent sent them (the machine folds their index entries, computed from these bodies). */
  'messages.appended': z.object({ messages: z.array(MessageSchema) }),
  'session.resumed': inputPayload('session.resumed'),
  'tasks.replaced': inputPayload('tasks.replaced'),
  'checkpoint.requested': inputPayload('checkpoint.requested'),
  'writer.settled': inputPayload('writer.settled'),
  'close.requested': inputPayload('close.requested'),
  'drain.requested': inputPayload('drain.requested'),
  'rebuild.requested': inputPayload('rebuild.requested'),
  'timer.fired': inputPayload('timer.fired'),
  'rebuild.abandoned': inputPayload('rebuild.abandoned'),
  'rebuild.rendered': z.object({
    requestId: z.string(),
    ok: z.boolean(),
    reason: z.string().optional(),
    boundary: MessageIndexEntrySchema.optional(),
    tailIds: z.array(z.string()),
    ...RebuiltContextFields,
  }),
  'rebuild.compacted': z.object({
    requestId: z.string(),
    source: z.enum(['model', 'extractive']),
    boundary: MessageIndexEntrySchema,
    tailIds: z.array(z.string()),
    ...RebuiltContextFields,
  }),
  /**
   * Derived: what the actor decided for the input at seq `for` (its state after the fold and the effects it asked
   * for). Replay recomputes decisions and compares them; they may be missing after a crash.
   */
  decision: z.object({ for: z.number().int().positive(), state: DecisionStateSchema, effects: z.array(EffectSchema) }),
} as const;

export type SessionRecordSchemas = typeof SESSION_RECORDS;
export type SessionRecord = RecordOf<SessionRecordSchemas>;
export type SessionRecordType = SessionRecord['type'];
export type SessionAppend = AppendOf<SessionRecordSchemas>;
export type StoredSessionRecord = StoredOf<SessionRecordSchemas>;

/** Record types that are inputs of the session machine (everything but `session.opened` and `decision`). */
export type SessionInputRecord = Exclude<SessionRecord, { type: 'session.opened' | 'decision' }>;
