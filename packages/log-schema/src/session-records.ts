import {
  CompactionSourceSchema,
  FailureSchema,
  MessageIndexEntrySchema,
  SessionEventSchema,
  isIndexList,
  type SessionContext,
  type SessionEffect,
  type SessionEvent,
} from '@baton/actors';
import {
  EncodingSchema,
  HandoffBasisSchema,
  HandoffWriterSchema,
  LineageKindSchema,
  LineageSchema,
  MessageSchema,
  ModelInfoSchema,
  OpenRequestSchema,
  OwnerDigestSchema,
  ProviderApiSchema,
  SessionIdSchema,
  WriterOutcomeSchema,
  WriterSlotSchema,
} from '@baton/protocol';
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

const count = z.number().int().nonnegative();
/** Provider tokens per Baton token by kind. */
const CalibrationSchema = z.object({ text: z.number(), tool: z.number(), image: z.number(), message: z.number().optional() });

/**
 * What a fitted rebuild did (log and inspector only; the session folds `adjusted` and `catchUp`): the usable window
 * (`limit`) and the share it aimed at, the tail's budget, the provider tokens of each part by the calibration it
 * counted with, and the measures it took in order (`cut`, `clear`, `truncate`, `truncate-user`, `summarise-user`,
 * `smaller-caps`).
 */
const FitReportSchema = z.object({
  limit: count,
  target: count,
  budget: count,
  tokens: z.object({ overhead: count, boundary: count, tail: count, total: count }),
  fits: z.boolean(),
  steps: z.array(z.object({ step: z.string(), messages: count, tokens: z.number().int() })),
  calibration: CalibrationSchema,
});

/**
 * What the worker attaches to a finished rebuild: the boundary message it inserted, the cleared tool outputs, the
 * bodies of tail messages a fit changed (an output cleared with a note, a text cut), what no checkpoint covers yet
 * (carried to the next rebuild), and the fit's report.
 */
const RebuiltContextFields = {
  message: MessageSchema.optional(),
  cleared: z.array(z.string()).optional(),
  clearedText: z.string().optional(),
  tokens: count.optional(),
  sections: z.array(z.object({ name: z.string(), tokens: count })).optional(),
  replaced: z.array(MessageSchema).optional(),
  uncovered: z.object({ lines: z.array(z.string()), users: z.array(z.object({ id: z.string(), text: z.string() })) }).optional(),
  fit: FitReportSchema.optional(),
  adjusted: z.array(z.object({ id: z.string(), tokens: count, images: count.optional() })).optional(),
  catchUp: z.boolean().optional(),
};

/** An effect as a decision records it (checked for its `kind`; replay compares the rest field by field). */
const EffectSchema = z.custom<SessionEffect>((v) => typeof v === 'object' && v !== null && typeof (v as { kind?: unknown }).kind === 'string', {
  message: 'expected an effect with a kind',
});

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null;

/**
 * A session actor's folded state: the machine's state value and context, and what its host keeps besides (the
 * boundary messages Baton inserted and the tool outputs it cleared, for the messages still in the context; the times
 * of the running writer's start and of the last settlement).
 */
export const SessionSnapshotSchema = z.object({
  /** Seq of the last input folded into this state. */
  for: z.number().int().nonnegative(),
  state: z.object({
    value: z.unknown(),
    // A snapshot of an older build (without the calibration its context now holds) is passed over: the session is
    // folded from its inputs instead, which computes every field.
    context: z.custom<SessionContext>(
      (v) => isObject(v) && isIndexList((v as { index?: unknown }).index) && isObject((v as { calibration?: unknown }).calibration),
      { message: 'expected a session context' },
    ),
  }),
  host: z.object({
    inserted: z.array(MessageSchema),
    cleared: z.array(z.tuple([z.string(), z.string()])),
    /** Tail messages a fitted rebuild sends otherwise than they were recorded (absent in older snapshots: none). */
    replaced: z.array(MessageSchema).optional(),
    /** What fitted rebuilds took out of the context and no checkpoint covers yet (absent: nothing). */
    uncovered: z.object({ lines: z.array(z.string()), users: z.array(z.object({ id: z.string(), text: z.string() })) }).optional(),
    writerStartedAt: z.number().int().nullable(),
    lastSettledAt: z.number().int().nullable(),
  }),
});
export type SessionSnapshot = z.infer<typeof SessionSnapshotSchema>;

/** How a writer settled, with its outcome as `outcome` checks it. */
const lastOutcomeOf = <O extends z.ZodType>(outcome: O) => z.object({ writerId: z.string(), outcome, failure: FailureSchema.nullable(), reason: z.string().nullable() });

/**
 * A session's state after a fold, as the worker reports it to the main thread: what requests are answered and
 * refused by. The decision records store it (see `DecisionStateSchema`).
 */
export const SessionSummarySchema = z.object({
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
  rebuildRequestId: z.string().nullable(),
  /** A drain stopped writers from starting (lifted when another daemon process loads the session). */
  draining: z.boolean(),
  /** How the last writer settled (as the session machine recorded it). */
  lastOutcome: lastOutcomeOf(WriterOutcomeSchema).nullable(),
  /** Provider tokens per Baton token by kind, once a reply reported usage. */
  calibration: CalibrationSchema.optional(),
  /** Prompt tokens the provider reported for the newest request, once one did. */
  lastPromptTokens: z.number().optional(),
  /** Requests the provider counted above the model's window or refused as too long, once there was one. */
  overWindow: z.number().optional(),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/**
 * The session summary a decision records, as read back: fields added by later versions are optional, and a recorded
 * outcome is any string (replay compares it with the re-fold's).
 */
export const DecisionStateSchema = SessionSummarySchema.extend({
  rebuildRequestId: z.string().nullable().optional(),
  draining: z.boolean().optional(),
  lastOutcome: lastOutcomeOf(z.string()).nullable().optional(),
});
export type DecisionState = z.infer<typeof DecisionStateSchema>;

/** Every record type of a `session/<sid>` stream and its payload. */
export const SESSION_RECORDS = {
  /**
   * First record: the setup the session machine starts from, the reply encoding, and the request as received.
   * `lineage` (absent: none): the session this one continues, how, and the checkpoint version and watermark it started
   * from. A handoff's token is never recorded: `request.handoff` is left out of the stored request.
   */
  'session.opened': z.object({ setup: SessionSetupSchema, encoding: EncodingSchema, request: OpenRequestSchema, lineage: LineageSchema.optional() }),
  /**
   * The session changed hands: from now on it belongs to `owner` (a keyed digest of a credential). Written when an
   * owned open takes a session that recorded nothing yet, or by `baton rebind` (a user rotated their key). Not an
   * input of the session machine: who may use a session is the gateway's and the daemon's concern, not the fold's.
   */
  'session.bound': z.object({ owner: OwnerDigestSchema }),
  /**
   * A handoff was granted on this session: the SHA-256 digest of the token (base64url; the token itself is never
   * stored), when it expires, what it renders for, and what the context was rendered from. Registers the lookup key
   * `handoffKey(token_digest)`. Not an input of the session machine.
   */
  'session.handoff_granted': z.object({
    token_digest: z.string(),
    expires_at: z.number().int().nonnegative(),
    to: ProviderApiSchema,
    model: ModelInfoSchema,
    checkpoint_version: z.number().int().nonnegative().nullable(),
    watermark: z.string().nullable(),
    basis: HandoffBasisSchema,
    writer: HandoffWriterSchema,
    /** The rendered context the token carries (what the grant's reply returned), in `to`. */
    context: z.array(MessageSchema),
    /** The lineage kind the claimed session records (absent: `handoff`). */
    kind: z.enum(['handoff', 'resume']).optional(),
  }),
  /**
   * Another session continues this one (a handoff's claim, a new slice, a resume): `session_id`, how, the token's digest
   * for a handoff, and every successor recorded so far with this one (`successors`, oldest first), so the newest of
   * these records, found by the lookup key `continued`, lists them all. Not an input of the session machine.
   */
  'session.continued': z.object({
    session_id: SessionIdSchema,
    kind: LineageKindSchema,
    token_digest: z.string().optional(),
    successors: z.array(z.object({ session_id: SessionIdSchema, kind: LineageKindSchema })),
  }),
  /** Messages as the agent sent them (the machine folds their index entries, computed from these bodies). */
  'messages.appended': z.object({ messages: z.array(MessageSchema) }),
  'session.resumed': inputPayload('session.resumed'),
  'tasks.replaced': inputPayload('tasks.replaced'),
  'checkpoint.requested': inputPayload('checkpoint.requested'),
  'writer.settled': inputPayload('writer.settled'),
  'close.requested': inputPayload('close.requested'),
  'drain.requested': inputPayload('drain.requested'),
  'drain.lifted': inputPayload('drain.lifted'),
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
    source: CompactionSourceSchema,
    boundary: MessageIndexEntrySchema,
    tailIds: z.array(z.string()),
    ...RebuiltContextFields,
  }),
  /**
   * Derived: what the actor decided for the input at seq `for` (its state after the fold and the effects it asked
   * for). Replay recomputes decisions and compares them; they may be missing after a crash.
   */
  decision: z.object({ for: z.number().int().positive(), state: DecisionStateSchema, effects: z.array(EffectSchema) }),
  /**
   * Derived: the folded state after input `for`, written every so many inputs and when the session is closed or
   * leaves memory; loading starts from the newest one (lookup key `snapshot`). Replay checks it against a full re-fold.
   */
  snapshot: SessionSnapshotSchema,
} as const;

export type SessionRecordSchemas = typeof SESSION_RECORDS;
export type SessionRecord = RecordOf<SessionRecordSchemas>;
export type SessionRecordType = SessionRecord['type'];
export type SessionAppend = AppendOf<SessionRecordSchemas>;
export type StoredSessionRecord = StoredOf<SessionRecordSchemas>;

/**
 * Record types that are inputs of the session machine (everything but `session.opened`, `session.bound`, the handoff
 * records, `decision`, `snapshot`).
 */
export type SessionInputRecord = Exclude<SessionRecord, { type: NonInputRecordType }>;

/** Session record types that are not inputs of the session machine. */
export const NON_INPUT_RECORD_TYPES = ['session.opened', 'session.bound', 'session.handoff_granted', 'session.continued', 'decision', 'snapshot'] as const;
export type NonInputRecordType = (typeof NON_INPUT_RECORD_TYPES)[number];

/** Whether a session record type is an input of the session machine. */
export function isSessionInput(type: string): boolean {
  return !(NON_INPUT_RECORD_TYPES as readonly string[]).includes(type);
}

/** The lookup key a `session.handoff_granted` record registers in its session's stream. */
export function handoffKey(tokenDigest: string): string {
  return `handoff:${tokenDigest}`;
}

/** The lookup key of the newest `session.continued` record of a session (it lists every successor). */
export const CONTINUED_KEY = 'continued';

/** The lookup key of the record that last set a session's owner (`session.opened` with an owner, `session.bound`). */
export const OWNER_KEY = 'owner';

/** The owner digest a record sets, if it sets one. */
export function ownerSetBy(record: { readonly type: string; readonly payload: unknown }): string | undefined {
  if (record.type === 'session.bound') return (record.payload as { owner?: string }).owner;
  if (record.type === 'session.opened') return (record.payload as { request?: { owner?: string } }).request?.owner;
  return undefined;
}

/** The lookup key of the newest snapshot of a session stream. */
export const SNAPSHOT_KEY = 'snapshot';
