import { z } from 'zod';
import {
  HandoffTokenSchema,
  OwnerDigestSchema,
  CountSchema,
  LineageKindSchema,
  NonEmptyStringSchema,
  OpenObjectSchema,
  PositiveIntSchema,
  SessionIdSchema,
} from './fields.ts';
import { ProviderApiSchema, RebuildReasonSchema, TaskStatusSchema } from './enums.ts';
import { MessageSchema } from './messages.ts';

/*
 * Request bodies of protocol v1 (docs/protocol.md). Objects Baton defines are strict: an unknown key is a `bad_request`
 * (it is almost always a typo such as `disable_writes`, and silently ignoring it would hide the mistake; the protocol
 * only grows under a new version prefix). Objects that come from the agent's OpenAI world (messages, tool
 * definitions, content parts) keep every field.
 */

/** Most messages one `append` may carry. */
export const MAX_APPEND_MESSAGES = 1000;

/** Baton's writer tools and their arguments, as `open.writer_tools` may map them onto the agent's own tools. */
export const WRITER_TOOL_ARGS = {
  read: ['path', 'offset', 'limit'],
  write: ['path', 'content'],
  edit: ['path', 'old_string', 'new_string', 'replace_all'],
  apply_patch: ['patch'],
  glob: ['pattern', 'path'],
  grep: ['pattern', 'path', 'include'],
  task: ['operation'],
  /** A shell the writer runs against the memory files only (reads, and heredoc writes); nothing is executed. */
  shell: ['command'],
} as const;
export type WriterToolName = keyof typeof WRITER_TOOL_ARGS;

function toolMapping<const A extends readonly [string, ...string[]]>(args: A) {
  return z
    .strictObject({
      /** The agent's tool name. */
      name: NonEmptyStringSchema,
      /** Baton argument name → the agent's argument name. */
      args: z.partialRecord(z.enum(args), NonEmptyStringSchema).optional(),
    })
    .optional();
}

/** `open.writer_tools`: Baton tool → the agent's tool (and argument names), for fork mode. */
export const WriterToolsSchema = z.strictObject({
  read: toolMapping(WRITER_TOOL_ARGS.read),
  write: toolMapping(WRITER_TOOL_ARGS.write),
  edit: toolMapping(WRITER_TOOL_ARGS.edit),
  apply_patch: toolMapping(WRITER_TOOL_ARGS.apply_patch),
  glob: toolMapping(WRITER_TOOL_ARGS.glob),
  grep: toolMapping(WRITER_TOOL_ARGS.grep),
  task: toolMapping(WRITER_TOOL_ARGS.task),
  shell: toolMapping(WRITER_TOOL_ARGS.shell),
});
export type WriterTools = z.infer<typeof WriterToolsSchema>;

export const ModelInfoSchema = z.strictObject({
  id: NonEmptyStringSchema,
  context_window: PositiveIntSchema,
  max_output_tokens: PositiveIntSchema.optional(),
  input_limit: PositiveIntSchema.optional(),
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

export const CheckpointOptionsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  fork: z.boolean().optional(),
  /** Ladder override: `"20%"`, `"100K"`, `"1.5M"` or token counts; the daemon parses and clamps them. */
  thresholds: z.array(z.union([NonEmptyStringSchema, PositiveIntSchema])).optional(),
  reserved: CountSchema.optional(),
});
export type CheckpointOptions = z.infer<typeof CheckpointOptionsSchema>;

/** Headers that carry credentials: never accepted in `open.headers` (a key must not reach the event log). */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'cookie', 'x-goog-api-key']);

/** `open.headers`: extra request headers for the session's writers (e.g. `anthropic-beta`); never credentials. */
export const WriterHeadersSchema = z
  .record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'expected an HTTP header name'), z.string())
  .check((ctx) => {
    for (const name of Object.keys(ctx.value)) {
      if (CREDENTIAL_HEADERS.has(name.toLowerCase())) ctx.issues.push({ code: 'custom', message: `credential header ${name} is not accepted`, input: ctx.value, path: [name] });
    }
  });

/**
 * `open.lineage`: the session a new one continues (kind `slice`: a gateway opening the next slice of a session key).
 * The daemon checks that session and fills the checkpoint version and watermark itself; the client names only these.
 */
export const OpenLineageSchema = z.strictObject({
  from_session: SessionIdSchema,
  kind: LineageKindSchema.extract(['slice']),
});
export type OpenLineage = z.infer<typeof OpenLineageSchema>;

/** `baton.v1.open`: open a new session (no `session_id`, or an unknown one) or resume a known one. */
export const OpenRequestSchema = z.strictObject({
  session_id: SessionIdSchema.optional(),
  project_id: NonEmptyStringSchema,
  agent: z.string().optional(),
  /** The agent's provider API (default `openai-chat`): the shape of its messages, tools and writer requests. */
  api: ProviderApiSchema.optional(),
  model: ModelInfoSchema,
  /**
   * The agent's system prompt: text (one or more system messages; Responses `instructions`), or for Anthropic its
   * `system` blocks as sent (kept verbatim, `cache_control` included).
   */
  system: z.union([z.string(), z.array(z.string()), z.array(OpenObjectSchema)]).optional(),
  tools: z.array(OpenObjectSchema).optional(),
  /**
   * Other fields of the agent's requests that fork-mode writers send as the agent does (Responses
   * `prompt_cache_key`, `reasoning`, `include`, `store`; Anthropic `thinking`, `max_tokens`), kept verbatim.
   */
  params: OpenObjectSchema.optional(),
  headers: WriterHeadersSchema.optional(),
  checkpoint: CheckpointOptionsSchema.optional(),
  memory: z.strictObject({ disable_write: z.boolean().optional() }).optional(),
  writer_tools: WriterToolsSchema.optional(),
  /**
   * The credential the session belongs to (a keyed digest, see `OwnerDigestSchema`), recorded with the opening. Opening
   * a session again with another owner is refused (`forbidden`) once the session recorded a message; before that, the
   * new owner takes it (a first call the provider refused, e.g. a mistyped key, claims nothing that lasts).
   */
  owner: OwnerDigestSchema.optional(),
  /**
   * The session this one continues; counts only when the open creates the session. Refused (nothing opened) when that
   * session is unknown or of another project (`not_found`) or bound to another owner than this request's (`forbidden`).
   */
  lineage: OpenLineageSchema.optional(),
  /**
   * A handoff token (additive): opens the new session the token grants, continuing the session it was granted on,
   * bound to `owner`. The same token with the same owner again resumes that session; `session_id` must be absent.
   */
  handoff: HandoffTokenSchema.optional(),
});
export type OpenRequest = z.infer<typeof OpenRequestSchema>;

/** `session.<sid>.append`: 1–1000 messages in conversation order. */
export const AppendRequestSchema = z.strictObject({
  messages: z.array(MessageSchema).min(1).max(MAX_APPEND_MESSAGES),
});
export type AppendRequest = z.infer<typeof AppendRequestSchema>;

/** Largest `append` the daemon reassembles from parts, in bytes of its JSON text. */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

/**
 * `session.<sid>.part`: one part of an `append` request too large for one message (over the server's max payload).
 * `data` is base64 of a slice of the append request's JSON text (`{"messages":[…]}`); parts `0 … count-1` of one
 * `upload` may come in any order, and once all are in the daemon appends the reassembled request (as if it had come
 * whole) and answers that part with its append reply. The other parts are answered with what it has received.
 */
export const PartRequestSchema = z.strictObject({
  upload: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'upload id must match [A-Za-z0-9_-]{8,64}'),
  index: z.number().int().nonnegative(),
  count: z.number().int().positive().max(4096),
  data: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'data must be base64'),
}).refine((r) => r.index < r.count, { message: 'index must be below count', path: ['index'] });
export type PartRequest = z.infer<typeof PartRequestSchema>;

export const TaskItemSchema = z.strictObject({
  id: NonEmptyStringSchema,
  parent_id: NonEmptyStringSchema.optional(),
  status: TaskStatusSchema,
  summary: z.string(),
  focus: z.boolean().optional(),
});
export type TaskItem = z.infer<typeof TaskItemSchema>;

/** `session.<sid>.tasks`: the full task tree, replacing the previous one (an empty list clears it). */
export const TasksRequestSchema = z.strictObject({ tasks: z.array(TaskItemSchema) });
export type TasksRequest = z.infer<typeof TasksRequestSchema>;

/** A request without parameters: `checkpoint`, `status`, `close`, `runtime.status`. */
export const EmptyRequestSchema = z.strictObject({});
export type EmptyRequest = z.infer<typeof EmptyRequestSchema>;

export const CheckpointRequestSchema = EmptyRequestSchema;
export type CheckpointRequest = EmptyRequest;
export const StatusRequestSchema = EmptyRequestSchema;
export type StatusRequest = EmptyRequest;
export const CloseRequestSchema = EmptyRequestSchema;
export type CloseRequest = EmptyRequest;
export const RuntimeStatusRequestSchema = EmptyRequestSchema;
export type RuntimeStatusRequest = EmptyRequest;

/**
 * `session.<sid>.rebuild`: `wait_ms` bounds how long the daemon may wait for a writer before it rebuilds.
 * `provider_refused` (additive): the provider refused the agent's request as longer than the model's window, and counted
 * it as `tokens` when its error said so; the session's calibration learns from it before the rebuild is fitted.
 * `self_contained` (additive): the rebuilt context is read on another machine than the daemon's memory files (an agent
 * behind a gateway it does not share a machine with), so it names no path of them; absent or false: it does.
 */
export const RebuildRequestSchema = z.strictObject({
  reason: RebuildReasonSchema,
  wait_ms: CountSchema.optional(),
  provider_refused: z.strictObject({ tokens: z.number().int().positive().optional() }).optional(),
  self_contained: z.boolean().optional(),
});
export type RebuildRequest = z.infer<typeof RebuildRequestSchema>;

/** `runtime.drain`: `timeout_ms` bounds the wait for running writers (daemon default 120 s). */
export const RuntimeDrainRequestSchema = z.strictObject({ timeout_ms: CountSchema.optional() });
export type RuntimeDrainRequest = z.infer<typeof RuntimeDrainRequestSchema>;

/** Sessions one `runtime.sessions` page lists when the request sets no `limit`. */
export const DEFAULT_SESSIONS_PAGE = 100;
/** Most sessions one `runtime.sessions` page may list. */
export const MAX_SESSIONS_PAGE = 1000;

/**
 * `runtime.sessions` (additive to v1): one page of the daemon's sessions in ascending session id order (ASCII), those
 * after `after` (exclusive; the previous page's `next`), at most `limit` (default 100, at most 1000).
 */
export const RuntimeSessionsRequestSchema = z.strictObject({
  limit: PositiveIntSchema.max(MAX_SESSIONS_PAGE).optional(),
  after: SessionIdSchema.optional(),
});
export type RuntimeSessionsRequest = z.infer<typeof RuntimeSessionsRequestSchema>;
