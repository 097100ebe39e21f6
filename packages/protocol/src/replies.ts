import { z } from 'zod';
import { CountSchema, EpochMsSchema, LineageSchema, NonEmptyStringSchema, SessionIdSchema } from './fields.ts';
import {
  FailureKindSchema,
  RebuildOutcomeSchema,
  WriterModeSchema,
  WriterOutcomeSchema,
  WriterSlotSchema,
} from './enums.ts';
import { MessageSchema } from './messages.ts';
import { InheritedSchema, SuccessorSchema } from './handoff.ts';

/*
 * Success replies of protocol v1. Every one carries `ok: true`; failures are `ErrorReply`. Reply objects are parsed
 * tolerantly (unknown keys are dropped, not refused) so a client keeps working against a daemon that says more.
 */

const ok = z.literal(true);

/**
 * The session's state as `append` and `status` report it. `overflow: true` means: call `rebuild` first. Additive
 * fields, present once they say something: `calibration`, the provider tokens per Baton (o200k) token the session
 * learnt from the usage its replies reported, by kind of content (`image`: per 1 000 of Baton's tokens an image is
 * counted as), and `message`, the tokens it adds for every message; `last_prompt_tokens`, what the provider reported for the newest request; `over_window`, how many
 * requests the provider counted above the model's window or refused as too long (never expected: a rebuilt request
 * is fitted to the usable window).
 */
export const SessionStateSchema = z.object({
  tokens: CountSchema,
  usable_window: CountSchema,
  next_threshold: CountSchema.nullable(),
  watermark: z.string().nullable(),
  writer: WriterSlotSchema,
  overflow: z.boolean(),
  calibration: z.object({ text: z.number().positive(), tool: z.number().positive(), image: z.number().positive(), message: z.number().nonnegative().optional() }).optional(),
  last_prompt_tokens: CountSchema.optional(),
  over_window: CountSchema.optional(),
});
export type SessionState = z.infer<typeof SessionStateSchema>;

/** Absolute paths of the session's memory files on the daemon's machine. */
export const MemoryPathsSchema = z.object({
  root: z.string(),
  checkpoint: z.string(),
  memory: z.string(),
  notes: z.string(),
  tasks_dir: z.string(),
});
export type MemoryPaths = z.infer<typeof MemoryPathsSchema>;

export const OpenReplySchema = z.object({
  ok,
  session_id: SessionIdSchema,
  resumed: z.boolean(),
  memory: MemoryPathsSchema,
  /** The threshold ladder in tokens, ascending. */
  thresholds: z.array(CountSchema),
  usable_window: CountSchema,
  /** Opened with a handoff token: the session continued and the context the agent's requests carry after its system prompt. */
  inherited: InheritedSchema.optional(),
  /** Where the session came from (present when its opening recorded a lineage). */
  lineage: LineageSchema.optional(),
});
export type OpenReply = z.infer<typeof OpenReplySchema>;

/** Sent once the accepted messages are durable. */
export const AppendReplySchema = z.object({
  ok,
  accepted: CountSchema,
  duplicates: CountSchema,
  state: SessionStateSchema,
});
export type AppendReply = z.infer<typeof AppendReplySchema>;

/** A `part` stored (`received`: parts of its upload in so far); the last one carries the reply of the append it made. */
export const PartReplySchema = z.object({
  ok,
  received: CountSchema,
  append: AppendReplySchema.omit({ ok: true }).optional(),
});
export type PartReply = z.infer<typeof PartReplySchema>;

export const TasksReplySchema = z.object({ ok, count: CountSchema });
export type TasksReply = z.infer<typeof TasksReplySchema>;

export const CheckpointResultSchema = z.enum(['started', 'queued', 'skipped']);
export type CheckpointResult = z.infer<typeof CheckpointResultSchema>;

export const CheckpointReplySchema = z.object({
  ok,
  result: CheckpointResultSchema,
  reason: z.string().optional(),
});
export type CheckpointReply = z.infer<typeof CheckpointReplySchema>;

/** `context` is the agent's new conversation after its system prompt (boundary message, then the preserved tail). */
export const RebuildReplySchema = z.object({
  ok,
  outcome: RebuildOutcomeSchema,
  covered_up_to: z.string().nullable(),
  context: z.array(MessageSchema),
  status_text: z.string(),
});
export type RebuildReply = z.infer<typeof RebuildReplySchema>;

/** A memory file as `status` reports it; `version` counts committed versions (0: never committed). */
export const MemoryFileInfoSchema = z.object({
  exists: z.boolean(),
  tokens: CountSchema,
  version: CountSchema,
});
export type MemoryFileInfo = z.infer<typeof MemoryFileInfoSchema>;

/** The running writer, if any. */
export const WriterInfoSchema = z.object({
  id: NonEmptyStringSchema,
  started_at: EpochMsSchema,
  covers_up_to: z.string(),
  mode: WriterModeSchema,
  turn: CountSchema,
  reentries: CountSchema,
});
export type WriterInfo = z.infer<typeof WriterInfoSchema>;

export const WriterFailureSchema = z.object({ kind: FailureKindSchema, retryable: z.boolean() });
export type WriterFailure = z.infer<typeof WriterFailureSchema>;

/** How the last writer settled (the same facts as its `writer.settled` event). */
export const LastOutcomeSchema = z.object({
  writer_id: NonEmptyStringSchema,
  outcome: WriterOutcomeSchema,
  failure: WriterFailureSchema.optional(),
  watermark: z.string().nullable(),
  at: EpochMsSchema,
});
export type LastOutcome = z.infer<typeof LastOutcomeSchema>;

export const StatusReplySchema = z.object({
  ok,
  state: SessionStateSchema,
  files: z.object({
    checkpoint: MemoryFileInfoSchema,
    memory: MemoryFileInfoSchema,
    notes: MemoryFileInfoSchema,
  }),
  writer: WriterInfoSchema.nullable(),
  last_outcome: LastOutcomeSchema.nullable(),
  /**
   * The owner digest the session is bound to, once it recorded a message (null: bound to nobody; absent from daemons
   * before owners existed).
   */
  owner: z.string().nullable().optional(),
});
export type StatusReply = z.infer<typeof StatusReplySchema>;

/** The session is closed; a running writer was drained first. */
export const CloseReplySchema = z.object({ ok });
export type CloseReply = z.infer<typeof CloseReplySchema>;

/**
 * A cluster-mode daemon's view (`runtime.status.cluster`): its durability and lease, how long ago its own heartbeat
 * was acknowledged (null before the first), whether it paused its judgements (its own KV operations fail), the
 * sessions it holds, and every daemon it heard of with the age of its heartbeat on this daemon's clock.
 */
export const RuntimeClusterSchema = z.object({
  durability: z.enum(['local', 'replicated']),
  lease_ms: CountSchema,
  heartbeat_age_ms: CountSchema.nullable(),
  paused: z.boolean(),
  sessions_held: CountSchema,
  daemons: z.array(z.object({ daemon_id: NonEmptyStringSchema, age_ms: CountSchema, stale: z.boolean(), gone: z.boolean() })),
});
export type RuntimeCluster = z.infer<typeof RuntimeClusterSchema>;

/**
 * `runtime.status`. `sessions`: sessions resident (in memory); `writers.running` / `writers.queued`: writers running
 * and requests waiting for a slot; `pool.threads`: worker threads, `pool.utilization`: the mean of the workers'
 * event-loop utilisation in [0, 1] when the pool reports it; `log.streams` / `log.records`: event-log streams and
 * records (records when cheaply known).
 *
 * `pool.workers` (added later, optional): each worker thread now (`RuntimeWorkerSchema`); `pool.worker_exits`: worker
 * threads that died since the daemon started (each was replaced).
 *
 * Added to v1 later, optional (an older daemon omits them): `sessions_total`: session streams in the event log,
 * resident or not; `quarantined`: sessions set aside because their log cannot be folded; `rss_bytes`: the daemon
 * process's resident set size; `log_bytes`: size of the event log's data file (absent for an in-memory log);
 * `cluster`: present when the daemon runs in cluster mode (`RuntimeClusterSchema`); `serving`: whether the daemon
 * serves sessions (false while it finishes start-up repair or, in cluster mode, has not joined the cluster yet), with
 * `not_serving` saying why: `reason` a stable code (`repairing`, `workers_failed` (its worker threads cannot start), `joining`, or why the last attempt to join failed:
 * `jetstream_disabled`, `replicas_above_cluster`, `not_enough_servers`, `permission_denied`, `no_quorum`,
 * `jetstream_error`, `join_failed`), `message` one sentence, `attempts` the attempts to join so far.
 */
/**
 * One worker thread of the pool: its slot (`host`), its thread id (null while a replacement starts), its event loop's
 * utilisation over the recent past (about ten seconds) in [0, 1], the sessions placed on it and the calls sent to it
 * that it has not answered yet (its queue).
 */
export const RuntimeWorkerSchema = z.object({
  host: CountSchema,
  thread_id: CountSchema.nullable(),
  utilization: z.number().min(0).max(1),
  sessions: CountSchema,
  pending_calls: CountSchema,
});
export type RuntimeWorker = z.infer<typeof RuntimeWorkerSchema>;

export const RuntimeStatusReplySchema = z.object({
  ok,
  daemon_id: NonEmptyStringSchema,
  uptime_ms: CountSchema,
  sessions: CountSchema,
  sessions_total: CountSchema.optional(),
  quarantined: CountSchema.optional(),
  writers: z.object({ running: CountSchema, queued: CountSchema }),
  pool: z.object({
    threads: CountSchema,
    utilization: z.number().min(0).max(1).optional(),
    workers: z.array(RuntimeWorkerSchema).optional(),
    worker_exits: CountSchema.optional(),
  }),
  log: z.object({ streams: CountSchema, records: CountSchema.optional() }),
  rss_bytes: CountSchema.optional(),
  log_bytes: CountSchema.optional(),
  cluster: RuntimeClusterSchema.optional(),
  serving: z.boolean().optional(),
  not_serving: z.object({ reason: NonEmptyStringSchema, message: z.string(), attempts: CountSchema.optional() }).optional(),
});
export type RuntimeStatusReply = z.infer<typeof RuntimeStatusReplySchema>;

/**
 * `runtime.drain`: the daemon stopped accepting work. `drained`: writers that settled within the timeout;
 * `timed_out`: writers still running when it expired; `dropped`: queued writer requests dropped.
 */
export const RuntimeDrainReplySchema = z.object({
  ok,
  drained: CountSchema,
  timed_out: CountSchema,
  dropped: CountSchema,
});
export type RuntimeDrainReply = z.infer<typeof RuntimeDrainReplySchema>;

/** How a session's last writer settled, as `runtime.sessions` lists it (`reason`: why, when the daemon recorded one). */
export const SessionOutcomeSchema = z.object({
  writer_id: NonEmptyStringSchema,
  outcome: WriterOutcomeSchema,
  failure: WriterFailureSchema.optional(),
  reason: z.string().optional(),
});
export type SessionOutcome = z.infer<typeof SessionOutcomeSchema>;

/**
 * One session in `runtime.sessions`. `project_id`, `model`, `opened_at`: its setup (null only when its opening record
 * cannot be read); `resident`: in memory now; `quarantined`: set aside because its log cannot be folded; `state`: the
 * live state of a resident session, else the state its newest recorded decision holds, null when it has none yet;
 * `closed`: closed by a `close` request; `last_outcome`: how its last writer settled (null: none settled; absent:
 * unknown, a log older than the field); `error`: why some of it could not be read (the quarantine reason, or the
 * record that failed its schema).
 */
export const RuntimeSessionSchema = z.object({
  session_id: SessionIdSchema,
  project_id: z.string().nullable(),
  model: z.string().nullable(),
  opened_at: EpochMsSchema.nullable(),
  resident: z.boolean(),
  quarantined: z.boolean(),
  state: SessionStateSchema.nullable(),
  closed: z.boolean(),
  last_outcome: SessionOutcomeSchema.nullable().optional(),
  /**
   * `stalled`: the gateway embedded with the daemon (`baton up`) could not record its latest calls into the session;
   * they are sent again with the session's next call. Absent otherwise (and from a separate gateway's sessions).
   */
  recording: z.enum(['stalled']).optional(),
  /** Where the session came from, as its opening recorded it (absent: it continues no other session). */
  lineage: LineageSchema.optional(),
  /** The sessions that continue this one (a handoff's claim, a slice, a resume), oldest first (absent: none). */
  successors: z.array(SuccessorSchema).optional(),
  error: z.string().optional(),
});
export type RuntimeSession = z.infer<typeof RuntimeSessionSchema>;

/**
 * `runtime.sessions` (additive to v1): one page of the answering daemon's sessions, ascending by session id. `next`:
 * present when more sessions follow; pass it as the next request's `after`.
 */
export const RuntimeSessionsReplySchema = z.object({
  ok,
  daemon_id: NonEmptyStringSchema,
  sessions: z.array(RuntimeSessionSchema),
  next: SessionIdSchema.optional(),
});
export type RuntimeSessionsReply = z.infer<typeof RuntimeSessionsReplySchema>;
