import {
  AppendReplySchema,
  CheckpointReplySchema,
  CloseReplySchema,
  ErrorReplySchema,
  IssueDetailSchema,
  OpenReplySchema,
  RuntimeStatusReplySchema,
  StatusReplySchema,
  TasksReplySchema,
  decodeReply,
  encodeRequest,
  encodingFromHeaders,
  type Encoding,
  type ErrorCode,
  type Headers,
} from '@baton/protocol';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { startHarness, type Harness } from './support/daemon-harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

/**
 * Random payloads against one daemon over a real nats-server: random bytes, random JSON values, MessagePack-encoded
 * arbitrary records and near-valid requests with one field broken, sent in small concurrent groups to random served
 * subjects. Every reply must be well formed, in the request's encoding, never `internal`; invalid requests append
 * nothing to the event log; the daemon still answers at the end.
 */

const NUM_RUNS = 1_000;
const MAX_REQUEST_BYTES = 64 * 1024;
const TIMEOUT_MS = 10_000;
const PROJECT = 'prop';
const MODEL = { id: 'test-model', context_window: 200_000 } as const;
/** Sessions opened before the runs (and resumed whenever a run closes one). */
const KNOWN_SIDS = ['prop-known-0', 'prop-known-1'] as const;
/** Never opened: no generated `open` may use it. */
const UNKNOWN_SID = 'prop-unknown-0';
const SESSION_VERBS = ['append', 'tasks', 'checkpoint', 'status', 'close'] as const;
type SessionVerb = (typeof SESSION_VERBS)[number];
/** Codes a bad request may get; `internal` never, `too_large` and `unavailable` not for these small payloads. */
const EXPECTED_ERRORS: readonly ErrorCode[] = ['decode_error', 'bad_request', 'not_found', 'conflict'];

let h: Harness;
let log: LmdbEventLog;
let transport: NatsTransport;
let daemon: BatonDaemon;
let client: BatonClient;

beforeAll(async () => {
  h = await startHarness({ mode: 'scripted', poolSize: 1, daemon: { maxRequestBytes: MAX_REQUEST_BYTES, checkpointDisabled: true } });
  ({ log, daemon, clientTransport: transport } = h);
  client = new BatonClient(transport, { timeoutMs: TIMEOUT_MS });
  for (const sid of KNOWN_SIDS) await openKnown(sid);
});

afterAll(async () => {
  await h?.stop();
});

/** Opens a known session, or resumes (and so reopens) it after a run closed it. */
async function openKnown(sid: string): Promise<void> {
  await client.open({ session_id: sid, project_id: PROJECT, model: { ...MODEL }, checkpoint: { enabled: false } });
}

// ----------------------------------------------------------------------------------------------------------------
// Targets.

type Target =
  | { readonly kind: 'open' }
  | { readonly kind: 'runtime.status' }
  | { readonly kind: 'session'; readonly verb: SessionVerb; readonly sid: string };

function subjectOf(t: Target): string {
  switch (t.kind) {
    case 'open':
      return 'baton.v1.open';
    case 'runtime.status':
      return 'baton.v1.runtime.status';
    case 'session':
      return `baton.v1.session.${t.sid}.${t.verb}`;
  }
}

const targetArb: fc.Arbitrary<Target> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Target>({ kind: 'open' }) },
  { weight: 1, arbitrary: fc.constant<Target>({ kind: 'runtime.status' }) },
  {
    weight: 7,
    arbitrary: fc.record({
      kind: fc.constant('session' as const),
      verb: fc.constantFrom(...SESSION_VERBS),
      sid: fc.constantFrom<string>(...KNOWN_SIDS, UNKNOWN_SID),
    }),
  },
);

// ----------------------------------------------------------------------------------------------------------------
// Valid bodies, to be broken.

const text = fc.string({ maxLength: 40 });
const id = fc.string({ minLength: 1, maxLength: 12 });

const openBodyArb = fc.record(
  {
    // A fresh id opens a new session, a known one resumes it (or conflicts under another project).
    session_id: fc.oneof(fc.constantFrom<string>(...KNOWN_SIDS), fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/).filter((s) => s !== UNKNOWN_SID)),
    project_id: fc.constantFrom(PROJECT, 'prop-other'),
    agent: text,
    model: fc.record(
      {
        id: fc.string({ minLength: 1, maxLength: 20 }),
        // Windows large enough for any ladder below, so the unbroken body is always valid.
        context_window: fc.integer({ min: 120_000, max: 2_000_000 }),
        max_output_tokens: fc.integer({ min: 1, max: 64_000 }),
        input_limit: fc.integer({ min: 60_000, max: 2_000_000 }),
      },
      { requiredKeys: ['id', 'context_window'] },
    ),
    system: fc.oneof(text, fc.array(text, { maxLength: 3 })),
    tools: fc.array(
      fc.record({ type: fc.constant('function'), function: fc.record({ name: id, description: text, parameters: fc.object({ maxDepth: 2 }) }) }),
      { maxLength: 2 },
    ),
    checkpoint: fc.record(
      {
        enabled: fc.constant(false),
        fork: fc.boolean(),
        thresholds: fc.array(fc.oneof(fc.constantFrom('20%', '50%', '100K', '1.5M'), fc.integer({ min: 1, max: 1_000_000 })), { maxLength: 3 }),
        reserved: fc.nat(20_000),
      },
      { requiredKeys: ['enabled'] },
    ),
    memory: fc.record({ disable_write: fc.boolean() }),
    writer_tools: fc.constant({ write: { name: 'write_file', args: { path: 'file_path', content: 'text' } } }),
  },
  { requiredKeys: ['project_id', 'model', 'checkpoint'] },
);

const messageArb = fc.record(
  {
    id,
    role: fc.constantFrom('user', 'assistant', 'tool', 'system'),
    content: fc.oneof(text, fc.constant(null), fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 })),
    tool_calls: fc.array(fc.record({ id, type: fc.constant('function'), function: fc.record({ name: id, arguments: text }) }), { maxLength: 2 }),
    tool_call_id: id,
    name: id,
    agent_id: fc.constantFrom('main', 'sub-1'),
    finish_reason: fc.constantFrom('stop', 'tool_calls'),
    usage: fc.record({ prompt_tokens: fc.nat(20_000), completion_tokens: fc.nat(2_000) }),
    created_at: fc.nat(),
  },
  { requiredKeys: ['id', 'role', 'content'] },
);

const taskArb = fc.record(
  {
    id,
    parent_id: id,
    status: fc.constantFrom('open', 'in_progress', 'blocked', 'done', 'abandoned'),
    summary: text,
    focus: fc.boolean(),
  },
  { requiredKeys: ['id', 'status', 'summary'] },
);

function validBodyArb(t: Target): fc.Arbitrary<Record<string, unknown>> {
  if (t.kind === 'open') return openBodyArb;
  if (t.kind === 'session' && t.verb === 'append') return fc.record({ messages: fc.array(messageArb, { minLength: 1, maxLength: 3 }) });
  if (t.kind === 'session' && t.verb === 'tasks') return fc.record({ tasks: fc.array(taskArb, { maxLength: 3 }) });
  return fc.constant({});
}

// ----------------------------------------------------------------------------------------------------------------
// Breaking one field.

type Mutation = { readonly kind: 'none' } | { readonly kind: 'wrong-type' | 'missing' | 'extra'; readonly path: string };

interface Node {
  readonly path: string[];
  readonly value: unknown;
}

function nodesOf(value: unknown, path: string[] = []): Node[] {
  const nodes: Node[] = [{ path, value }];
  if (Array.isArray(value)) value.forEach((v, i) => nodes.push(...nodesOf(v, [...path, String(i)])));
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) nodes.push(...nodesOf(v, [...path, k]));
  return nodes;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Replacements of another kind than the value they replace. */
const REPLACEMENTS: readonly unknown[] = [42, -1.5, 'wrong', true, null, [1, 'two'], { nested: 1 }];

function setAt(root: Record<string, unknown>, path: readonly string[], update: (parent: Record<string, unknown> | unknown[], key: string) => void): void {
  let parent: unknown = root;
  for (const key of path.slice(0, -1)) parent = (parent as Record<string, unknown>)[key];
  const last = path[path.length - 1];
  if (last !== undefined) update(parent as Record<string, unknown>, last);
}

function mutate(body: Record<string, unknown>, kind: 'none' | 'wrong-type' | 'missing' | 'extra', pick: number, replacement: number, extraKey: string, extraValue: unknown): { body: unknown; mutation: Mutation } {
  if (kind === 'none') return { body, mutation: { kind: 'none' } };
  const copy = structuredClone(body);
  const nodes = nodesOf(copy);
  if (kind === 'extra') {
    const objects = nodes.filter((n) => kindOf(n.value) === 'object');
    const target = objects[pick % objects.length] ?? { path: [], value: copy };
    (target.value as Record<string, unknown>)[extraKey] = extraValue;
    return { body: copy, mutation: { kind, path: [...target.path, extraKey].join('.') } };
  }
  if (kind === 'missing') {
    // Object members only: removing an array element mostly leaves a valid array.
    const members = nodes.filter((n) => n.path.length > 0 && !/^\d+$/.test(n.path[n.path.length - 1] ?? ''));
    const target = members[pick % Math.max(1, members.length)];
    if (target === undefined) return { body: copy, mutation: { kind: 'none' } };
    setAt(copy, target.path, (parent, key) => delete (parent as Record<string, unknown>)[key]);
    return { body: copy, mutation: { kind, path: target.path.join('.') } };
  }
  const candidates = nodes.filter((n) => n.path.length > 0);
  const target = candidates[pick % Math.max(1, candidates.length)];
  if (target === undefined) {
    // `{}`: the body itself gets the wrong type.
    const others = REPLACEMENTS.filter((r) => kindOf(r) !== 'object');
    return { body: others[replacement % others.length], mutation: { kind, path: '' } };
  }
  const others = REPLACEMENTS.filter((r) => kindOf(r) !== kindOf(target.value));
  const value = others[replacement % others.length];
  setAt(copy, target.path, (parent, key) => {
    (parent as Record<string, unknown>)[key] = value;
  });
  return { body: copy, mutation: { kind, path: target.path.join('.') } };
}

// ----------------------------------------------------------------------------------------------------------------
// Payloads.

interface Payload {
  readonly source: 'bytes' | 'json-value' | 'arbitrary-record' | 'near-valid';
  readonly encoding: Encoding;
  readonly headers: Headers | undefined;
  readonly data: Uint8Array;
  readonly mutation: Mutation | null;
}

interface Request {
  readonly target: Target;
  readonly payload: Payload;
}

const headersArb: fc.Arbitrary<{ encoding: Encoding; headers: Headers | undefined }> = fc.oneof(
  fc.constant({ encoding: 'msgpack' as const, headers: undefined }),
  fc.constant({ encoding: 'msgpack' as const, headers: { 'content-type': 'application/msgpack' } }),
  fc.constant({ encoding: 'json' as const, headers: { 'content-type': 'application/json' } }),
  fc.constant({ encoding: 'json' as const, headers: { 'Content-Type': 'Application/JSON; charset=utf-8' } }),
);

// A plain msgpackr packer, so extension types (Date, undefined, Map, Set, typed arrays …) reach the daemon as they are.
const rawPackr = new Packr({ useRecords: false, useBigIntExtension: true });
const textEncoder = new TextEncoder();

function encodeLoosely(value: unknown, encoding: Encoding): Uint8Array {
  if (encoding === 'json') return textEncoder.encode(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null');
  return rawPackr.pack(value);
}

function payloadArb(target: Target): fc.Arbitrary<Payload> {
  const bytes = fc
    .tuple(headersArb, fc.uint8Array({ maxLength: 200 }))
    .map(([h, data]): Payload => ({ source: 'bytes', ...h, data, mutation: null }));
  const jsonValue = fc
    .tuple(headersArb, fc.jsonValue({ maxDepth: 4 }))
    .map(([h, value]): Payload => ({ source: 'json-value', ...h, data: encodeRequest(value, h.encoding), mutation: null }));
  const arbitraryRecord = fc
    .tuple(
      headersArb,
      fc.dictionary(
        fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('messages', 'tasks', 'project_id', 'model', '__proto__', 'constructor')),
        fc.anything({ maxDepth: 3, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withUnicodeString: true }),
        { maxKeys: 5 },
      ),
    )
    .map(([h, value]): Payload => ({ source: 'arbitrary-record', ...h, data: encodeLoosely(value, h.encoding), mutation: null }));
  const nearValid = fc
    .tuple(
      headersArb,
      validBodyArb(target),
      fc.constantFrom('none', 'wrong-type', 'wrong-type', 'missing', 'missing', 'extra', 'extra'),
      fc.nat(),
      fc.nat(),
      fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('session_id', 'id', 'force', 'disable_writes')),
      fc.jsonValue({ maxDepth: 2 }),
    )
    .map(([h, body, kind, pick, replacement, extraKey, extraValue]): Payload => {
      const broken = mutate(body, kind, pick, replacement, extraKey, extraValue);
      return { source: 'near-valid', ...h, data: encodeRequest(broken.body, h.encoding), mutation: broken.mutation };
    });
  return fc.oneof(
    { weight: 2, arbitrary: bytes },
    { weight: 2, arbitrary: jsonValue },
    { weight: 2, arbitrary: arbitraryRecord },
    { weight: 4, arbitrary: nearValid },
  );
}

const requestArb: fc.Arbitrary<Request> = targetArb.chain((target) => payloadArb(target).map((payload) => ({ target, payload })));

// ----------------------------------------------------------------------------------------------------------------
// Checks.

const SUCCESS_SCHEMAS = {
  open: OpenReplySchema,
  'runtime.status': RuntimeStatusReplySchema,
  append: AppendReplySchema,
  tasks: TasksReplySchema,
  checkpoint: CheckpointReplySchema,
  status: StatusReplySchema,
  close: CloseReplySchema,
} as const;

/** Whether one dotted path lies on the other's branch (`a.b` and `a.b.c`), segment by segment. */
function related(a: string, b: string): boolean {
  return a === b || a === '' || b === '' || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

async function logSnapshot(): Promise<Map<string, number>> {
  // Decisions of earlier valid requests are written lazily; write them now so only bad requests are compared.
  await daemon.sessions.flushDecisions();
  await log.flushed();
  const snapshot = new Map<string, number>();
  for (const stream of log.streams()) snapshot.set(stream, log.lastSeq(stream));
  return snapshot;
}

const replyCounts = new Map<string, number>();
const sourceCounts = new Map<string, number>();
const bump = (m: Map<string, number>, k: string): void => {
  m.set(k, (m.get(k) ?? 0) + 1);
};

/**
 * Sends one request and checks its reply. Returns the stream the request may have appended to (its session when it
 * succeeded and changes state), or null.
 */
async function sendAndCheck({ target, payload }: Request): Promise<{ stream: string | null; closed: string | null }> {
  bump(sourceCounts, payload.source);
  expect(payload.data.byteLength).toBeLessThan(MAX_REQUEST_BYTES);
  const reply = await transport.request(subjectOf(target), payload.data, {
    timeoutMs: TIMEOUT_MS,
    ...(payload.headers === undefined ? {} : { headers: payload.headers }),
  });
  expect(encodingFromHeaders(reply.headers)).toBe(payload.encoding);
  const value = decodeReply(reply.data, payload.encoding);
  const name = target.kind === 'session' ? target.verb : target.kind;
  if ((value as { ok?: unknown }).ok === true) {
    bump(replyCounts, 'ok');
    SUCCESS_SCHEMAS[name].parse(value);
    expect(target.kind === 'session' && target.sid === UNKNOWN_SID, 'ok for an unknown session').toBe(false);
    if (target.kind === 'open') return { stream: `session/${(value as { session_id: string }).session_id}`, closed: null };
    if (target.kind === 'session' && target.verb !== 'status') {
      return { stream: `session/${target.sid}`, closed: target.verb === 'close' ? target.sid : null };
    }
    return { stream: null, closed: null };
  }
  const parsed = ErrorReplySchema.strict().safeParse(value);
  expect(parsed.success, `malformed reply ${JSON.stringify(value)}`).toBe(true);
  const { code, message, details } = (value as z.infer<typeof ErrorReplySchema>).error;
  bump(replyCounts, code);
  expect(EXPECTED_ERRORS, `${code}: ${message}`).toContain(code);
  if (code === 'bad_request') {
    const paths = z.array(IssueDetailSchema).min(1).parse(details).map((d) => d.path);
    const m = payload.mutation;
    if (m !== null && (m.kind === 'wrong-type' || m.kind === 'missing')) {
      expect(paths.some((p) => related(p, m.path)), `${m.kind} at "${m.path}" but details list ${JSON.stringify(paths)}`).toBe(true);
    }
  } else {
    expect(details).toBeUndefined();
  }
  if (code === 'not_found') expect(target.kind === 'session' && target.sid === UNKNOWN_SID).toBe(true);
  if (code === 'conflict') expect(target.kind).not.toBe('runtime.status');
  return { stream: null, closed: null };
}

describe('random payloads on every served subject', () => {
  it(`answers ${NUM_RUNS} groups of random requests with well-formed replies and logs nothing for bad ones`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: 1, maxLength: 3 }), async (group) => {
        const before = await logSnapshot();
        const results = await Promise.all(group.map(sendAndCheck));
        const after = await logSnapshot();
        // Only a request that succeeded may have changed its session's stream (its input plus derived `decision`
        // records); a bad request in the same group as a good one for the same session is covered by the group-of-one
        // runs, which fast-check generates as often as the others.
        const allowed = new Set(results.flatMap((r) => (r.stream === null ? [] : [r.stream])));
        for (const [stream, seq] of after) {
          if (seq !== before.get(stream)) expect(allowed, `${stream} changed (${before.get(stream) ?? 0} → ${seq})`).toContain(stream);
        }
        expect(after.has(`session/${UNKNOWN_SID}`)).toBe(false);
        // Keep the known sessions usable: a run that closed one reopens it (outside the measured window).
        for (const sid of new Set(results.flatMap((r) => (r.closed === null ? [] : [r.closed])))) await openKnown(sid);
      }),
      { numRuns: NUM_RUNS },
    );
    // The generators reach every kind of answer, so the checks above were exercised.
    for (const code of ['ok', 'decode_error', 'bad_request', 'not_found']) expect(replyCounts.get(code) ?? 0, code).toBeGreaterThan(0);
    console.log('bad-input property:', Object.fromEntries(sourceCounts), Object.fromEntries(replyCounts));

    const status = await client.runtimeStatus();
    expect(status.ok).toBe(true);
    await openKnown(KNOWN_SIDS[0]);
    const appended = await client.append(KNOWN_SIDS[0], [{ id: 'after-the-runs', role: 'user', content: 'still here' }]);
    expect(appended.accepted).toBe(1);
  }, 120_000);
});
