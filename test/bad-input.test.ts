import { BatonClient, NatsTransport, TransportError, type ReplyMessage } from '@baton/client';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import {
  ErrorReplySchema,
  IssueDetailSchema,
  decodeReply,
  encodeRequest,
  encodingFromHeaders,
  type Encoding,
  type ErrorCode,
  type Headers,
  type OpenRequest,
} from '@baton/protocol';
import { startHarness, type Harness } from './support/daemon-harness.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

/**
 * Bad input over a real nats-server (docs/protocol.md "Encoding"): every served subject answers malformed MessagePack,
 * malformed JSON, wrong types, missing fields, unknown fields, unknown sessions and oversized payloads with the
 * documented error reply, in the request's encoding, without appending anything to the event log, and keeps serving.
 */

/** The daemon's request limit; the nats-server keeps its default `max_payload` of 1 MiB. */
const MAX_REQUEST_BYTES = 64 * 1024;
const JSON_HEADERS: Headers = { 'content-type': 'application/json' };
const UNKNOWN_SID = 'no-such-session-0000';
const TIMEOUT_MS = 10_000;
const MODEL = { id: 'test-model', context_window: 200_000 } as const;

let h: Harness;
let log: LmdbEventLog;
let clientTransport: NatsTransport;
let tapTransport: NatsTransport;
let daemon: BatonDaemon;
let client: BatonClient;
/** A session that stays open for the whole file (never closed). */
let mainSid: string;

beforeAll(async () => {
  h = await startHarness({ mode: 'scripted', poolSize: 1, daemon: { maxRequestBytes: MAX_REQUEST_BYTES, checkpointDisabled: true } });
  ({ log, daemon, clientTransport } = h);
  tapTransport = await NatsTransport.connect({ servers: h.nats.url, name: 'tap' });
  client = new BatonClient(clientTransport, { timeoutMs: TIMEOUT_MS });
  const opened = await client.open(validOpen());
  mainSid = opened.session_id;
  await client.append(mainSid, [{ id: 'seed-1', role: 'user', content: 'hello' }]);
});

afterAll(async () => {
  await tapTransport?.close();
  await h?.stop();
});

function validOpen(): OpenRequest {
  return { project_id: 'bad-input', model: { ...MODEL }, checkpoint: { enabled: false } };
}

let messageCounter = 0;
function validAppend(): Record<string, unknown> {
  messageCounter++;
  return { messages: [{ id: `valid-${messageCounter}`, role: 'user', content: `message ${messageCounter}` }] };
}

/** A request body of about 100 KiB that is otherwise valid for its subject. */
function oversized(body: object): Record<string, unknown> {
  return { ...body, padding: 'x'.repeat(100 * 1024) };
}

// ----------------------------------------------------------------------------------------------------------------
// The served subjects and their bad bodies.

interface BadBody {
  readonly label: string;
  readonly body: unknown;
  /** Paths `error.details` must list. */
  readonly paths: readonly string[];
}

interface ServedSubject {
  readonly name: string;
  /** Where a free-form value fits in a valid body (verbatim OpenAI objects), else an unknown top-level field. */
  readonly freeForm: { readonly path: string; readonly place: (value: unknown) => Record<string, unknown> };
  /** Session-scoped subjects take the session id; `open` and `runtime.status` ignore it. */
  readonly subject: (sid: string) => string;
  readonly sessionScoped: boolean;
  readonly valid: () => Record<string, unknown>;
  readonly wrongTypes: BadBody;
  readonly missing: BadBody;
  readonly unknownField: BadBody;
}

const EMPTY_BODY_CASES = {
  freeForm: { path: 'deep', place: (value: unknown) => ({ deep: value }) },
  wrongTypes: { label: 'an array instead of an object', body: ['not', 'an', 'object'], paths: [''] },
  missing: { label: 'nil instead of the body object', body: null, paths: [''] },
  unknownField: { label: 'an unknown field', body: { force: true }, paths: ['force'] },
} as const;

const SERVED: readonly ServedSubject[] = [
  {
    name: 'open',
    subject: () => 'baton.v1.open',
    sessionScoped: false,
    valid: validOpen,
    freeForm: { path: 'tools.0.parameters', place: (value) => ({ ...validOpen(), tools: [{ type: 'function', parameters: value }] }) },
    wrongTypes: {
      label: 'wrong types',
      body: { project_id: 42, model: { id: 'm', context_window: 'big' }, system: 7, checkpoint: { enabled: 'no' } },
      paths: ['project_id', 'model.context_window', 'system', 'checkpoint.enabled'],
    },
    missing: { label: 'missing project_id and model.id', body: { model: { context_window: 1000 } }, paths: ['project_id', 'model.id'] },
    unknownField: { label: 'an unknown field', body: { ...validOpen(), memory: { disable_writes: true } }, paths: ['memory.disable_writes'] },
  },
  {
    name: 'append',
    subject: (sid) => `baton.v1.session.${sid}.append`,
    sessionScoped: true,
    valid: validAppend,
    freeForm: {
      path: 'messages.0.content.0.data',
      place: (value) => ({ messages: [{ id: `free-form-${++messageCounter}`, role: 'user', content: [{ type: 'text', text: 'hi', data: value }] }] }),
    },
    wrongTypes: {
      label: 'wrong types',
      body: { messages: [{ id: 5, role: 'robot', content: 7, created_at: 'yesterday' }] },
      paths: ['messages.0.id', 'messages.0.role', 'messages.0.content', 'messages.0.created_at'],
    },
    missing: { label: 'missing id and content', body: { messages: [{ role: 'user' }] }, paths: ['messages.0.id', 'messages.0.content'] },
    unknownField: { label: 'an unknown field', body: { ...validAppend(), mesages: [] }, paths: ['mesages'] },
  },
  {
    name: 'tasks',
    subject: (sid) => `baton.v1.session.${sid}.tasks`,
    sessionScoped: true,
    freeForm: { path: 'deep', place: (value) => ({ tasks: [], deep: value }) },
    valid: () => ({ tasks: [{ id: 't1', status: 'in_progress', summary: 'write the tests', focus: true }] }),
    wrongTypes: {
      label: 'wrong types',
      body: { tasks: [{ id: 't1', status: 'finished', summary: 3, focus: 'yes' }] },
      paths: ['tasks.0.status', 'tasks.0.summary', 'tasks.0.focus'],
    },
    missing: { label: 'missing status and summary', body: { tasks: [{ id: 't1' }] }, paths: ['tasks.0.status', 'tasks.0.summary'] },
    unknownField: { label: 'an unknown field', body: { tasks: [{ id: 't1', status: 'open', summary: 's', owner: 'me' }] }, paths: ['tasks.0.owner'] },
  },
  { name: 'checkpoint', subject: (sid) => `baton.v1.session.${sid}.checkpoint`, sessionScoped: true, valid: () => ({}), ...EMPTY_BODY_CASES },
  {
    name: 'rebuild',
    subject: (sid) => `baton.v1.session.${sid}.rebuild`,
    sessionScoped: true,
    // Checkpointing is off in this daemon: a valid rebuild compacts (the scripted model fails, so extractively).
    valid: () => ({ reason: 'manual', wait_ms: 0 }),
    freeForm: { path: 'deep', place: (value) => ({ reason: 'manual', deep: value }) },
    wrongTypes: { label: 'wrong types', body: { reason: 'now', wait_ms: 'soon' }, paths: ['reason', 'wait_ms'] },
    missing: { label: 'missing reason', body: { wait_ms: 10 }, paths: ['reason'] },
    unknownField: { label: 'an unknown field', body: { reason: 'manual', force: true }, paths: ['force'] },
  },
  { name: 'status', subject: (sid) => `baton.v1.session.${sid}.status`, sessionScoped: true, valid: () => ({}), ...EMPTY_BODY_CASES },
  { name: 'close', subject: (sid) => `baton.v1.session.${sid}.close`, sessionScoped: true, valid: () => ({}), ...EMPTY_BODY_CASES },
  { name: 'runtime.status', subject: () => 'baton.v1.runtime.status', sessionScoped: false, valid: () => ({}), ...EMPTY_BODY_CASES },
];

const enc = new TextEncoder();
const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

/** Not one valid MessagePack value. */
const MALFORMED_MSGPACK: readonly { label: string; data: Uint8Array }[] = [
  { label: 'the reserved byte 0xc1', data: bytes(0xc1) },
  { label: 'a truncated map', data: bytes(0x82, 0xa1, 0x61, 0x01, 0xa1) },
  { label: 'trailing bytes after a map', data: bytes(0x80, 0x80) },
  { label: 'an extension type', data: bytes(0xd4, 0x05, 0x00) },
  { label: 'a JSON text without the JSON header', data: enc.encode('{"project_id":"p"}') },
];

/** Not valid UTF-8 JSON, sent with `content-type: application/json` (or a variant of it). */
const MALFORMED_JSON: readonly { label: string; data: Uint8Array; headers: Headers }[] = [
  { label: 'a truncated object', data: enc.encode('{"project_id": '), headers: JSON_HEADERS },
  { label: 'trailing garbage', data: enc.encode('{} x'), headers: JSON_HEADERS },
  { label: 'invalid UTF-8', data: bytes(0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d), headers: JSON_HEADERS },
  { label: 'a MessagePack body under the JSON header', data: encodeRequest({ project_id: 'p' }, 'msgpack'), headers: JSON_HEADERS },
  { label: 'a truncated array, header with charset', data: enc.encode('[1, 2'), headers: { 'Content-Type': 'application/json; charset=utf-8' } },
];

const ENCODINGS: readonly Encoding[] = ['msgpack', 'json'];

// ----------------------------------------------------------------------------------------------------------------
// Helpers.

function headersFor(encoding: Encoding): Headers | undefined {
  return encoding === 'json' ? JSON_HEADERS : undefined;
}

async function send(subject: string, data: Uint8Array, headers?: Headers): Promise<ReplyMessage> {
  return await clientTransport.request(subject, data, { timeoutMs: TIMEOUT_MS, ...(headers === undefined ? {} : { headers }) });
}

async function sendBody(subject: string, body: unknown, encoding: Encoding): Promise<ReplyMessage> {
  return await send(subject, encodeRequest(body, encoding), headersFor(encoding));
}

const DEEP_MARKER = 'deep-value-goes-here';

/**
 * Encodes `body` with its `DEEP_MARKER` string replaced by `depth` nested empty arrays: 2 bytes a level in JSON, 1 in
 * MessagePack (fixarray of one). Spliced into the bytes because encoding such a value recursively overflows the stack.
 */
function withDeepValue(body: unknown, encoding: Encoding, depth: number): Uint8Array {
  const data = encodeRequest(body, encoding);
  const marker = encoding === 'json' ? enc.encode(JSON.stringify(DEEP_MARKER)) : encodeRequest(DEEP_MARKER, 'msgpack');
  const deep =
    encoding === 'json'
      ? enc.encode('['.repeat(depth) + ']'.repeat(depth))
      : Uint8Array.from([...new Array<number>(depth - 1).fill(0x91), 0x90]);
  const at = Buffer.from(data).indexOf(Buffer.from(marker));
  expect(at).toBeGreaterThan(0);
  return Uint8Array.from([...data.subarray(0, at), ...deep, ...data.subarray(at + marker.length)]);
}

/** Every stream with its last sequence, plus the log-wide count, once every issued append has settled. */
async function logSnapshot(): Promise<Record<string, number>> {
  // Work earlier valid requests queued (a closed session leaving memory writes its snapshot) and their decisions,
  // written lazily, are done now, so only bad requests are compared.
  await daemon.sessions.idle();
  await daemon.sessions.flushDecisions();
  await log.flushed();
  const snapshot: Record<string, number> = { '*global': log.lastGlobalSeq() };
  for (const stream of log.streams()) snapshot[stream] = log.lastSeq(stream);
  return snapshot;
}

/**
 * Asserts that `reply` is the documented error reply with `code`, encoded in `encoding` (a JSON reply carries the
 * JSON content-type, a MessagePack reply none), and for `bad_request` that `details` lists every path of `paths`.
 */
function expectError(reply: ReplyMessage, encoding: Encoding, code: ErrorCode, paths: readonly string[] = []): z.infer<typeof ErrorReplySchema> {
  expect(encodingFromHeaders(reply.headers)).toBe(encoding);
  const value = decodeReply(reply.data, encoding);
  const parsed = ErrorReplySchema.strict().safeParse(value);
  expect(parsed.success, `not an error reply: ${JSON.stringify(value)}`).toBe(true);
  const error = (value as z.infer<typeof ErrorReplySchema>).error;
  expect(error.code, error.message).toBe(code);
  expect(error.message.length).toBeGreaterThan(0);
  if (code === 'bad_request') {
    const details = z.array(IssueDetailSchema).min(1).parse(error.details);
    const listed = details.map((d) => d.path);
    for (const path of paths) expect(listed).toContain(path);
  } else {
    expect(error.details).toBeUndefined();
  }
  return value as z.infer<typeof ErrorReplySchema>;
}

/**
 * Sends a bad request and checks: the error reply (via `check`), nothing appended to the event log, and the daemon
 * still answers valid requests afterwards (session status, runtime status).
 */
async function expectRejected(request: () => Promise<ReplyMessage>, check: (reply: ReplyMessage) => void): Promise<void> {
  const before = await logSnapshot();
  const reply = await request();
  check(reply);
  const status = await client.status(mainSid);
  expect(status.ok).toBe(true);
  const runtime = await client.runtimeStatus();
  expect(runtime.ok).toBe(true);
  expect(await logSnapshot()).toEqual(before);
}

function sidFor(s: ServedSubject): string {
  return s.sessionScoped ? mainSid : UNKNOWN_SID;
}

// ----------------------------------------------------------------------------------------------------------------

describe.each(SERVED)('baton.v1 $name', (served) => {
  it.each(MALFORMED_MSGPACK)('answers decode_error in MessagePack for $label', async ({ data }) => {
    await expectRejected(() => send(served.subject(sidFor(served)), data), (reply) => expectError(reply, 'msgpack', 'decode_error'));
  });

  it.each(MALFORMED_JSON)('answers decode_error in JSON for $label', async ({ data, headers }) => {
    await expectRejected(() => send(served.subject(sidFor(served)), data, headers), (reply) => expectError(reply, 'json', 'decode_error'));
  });

  describe.each(ENCODINGS)('in %s', (encoding) => {
    it.each([served.wrongTypes, served.missing, served.unknownField])('answers bad_request listing the failing paths for $label', async ({ body, paths }) => {
      await expectRejected(() => sendBody(served.subject(sidFor(served)), body, encoding), (reply) => expectError(reply, encoding, 'bad_request', paths));
    });

    if (served.sessionScoped) {
      it('checks the body before the session: a bad body for an unknown session is bad_request', async () => {
        await expectRejected(
          () => sendBody(served.subject(UNKNOWN_SID), served.wrongTypes.body, encoding),
          (reply) => expectError(reply, encoding, 'bad_request', served.wrongTypes.paths),
        );
      });

      it('answers not_found for an unknown session', async () => {
        await expectRejected(() => sendBody(served.subject(UNKNOWN_SID), served.valid(), encoding), (reply) => expectError(reply, encoding, 'not_found'));
        expect([...log.streams()].some((s) => s.includes(UNKNOWN_SID))).toBe(false);
      });
    } else if (served.name === 'open') {
      // `open` with an unknown session id opens that session (docs/protocol.md), so its session-id error is a bad id.
      it('answers bad_request for a session id that is not one subject token', async () => {
        await expectRejected(
          () => sendBody(served.subject(''), { ...validOpen(), session_id: 'no such/session' }, encoding),
          (reply) => expectError(reply, encoding, 'bad_request', ['session_id']),
        );
      });
    }

    // Deep values fit in the size limit (2 bytes a level in JSON, 1 in MessagePack) but break recursive code such as
    // the event log's encoder. 5 000 levels overflow msgpackr's decoder already (decode_error), JSON.parse's not.
    it.each(encoding === 'json' ? [1_000, 5_000] : [1_000])('answers bad_request for a value nested %i levels deep', async (depth) => {
      const data = withDeepValue(served.freeForm.place(DEEP_MARKER), encoding, depth);
      expect(data.byteLength).toBeLessThan(MAX_REQUEST_BYTES);
      await expectRejected(
        () => send(served.subject(sidFor(served)), data, headersFor(encoding)),
        (reply) => {
          const { error } = expectError(reply, encoding, 'bad_request');
          const paths = z.array(IssueDetailSchema).parse(error.details).map((d) => d.path);
          expect(paths.some((p) => p.startsWith(served.freeForm.path)), paths.join(', ')).toBe(true);
        },
      );
    });

    // MessagePack carries 64-bit integers; beyond 2^53 they decode to bigints, which JSON replies and token counting
    // cannot take (appended as message content, one used to quarantine its session).
    if (encoding === 'msgpack') {
      it('answers bad_request for an integer beyond 2^53', async () => {
        await expectRejected(
          () => sendBody(served.subject(sidFor(served)), served.freeForm.place({ n: 2n ** 60n }), encoding),
          (reply) => expectError(reply, encoding, 'bad_request', [`${served.freeForm.path}.n`]),
        );
      });
    }

    if (served.freeForm.path !== 'deep') {
      it('accepts a free-form value nested 50 levels deep', async () => {
        const reply = await send(served.subject(mainSid), withDeepValue(served.freeForm.place(DEEP_MARKER), encoding, 50), headersFor(encoding));
        expect(decodeReply(reply.data, encoding)).toMatchObject({ ok: true });
      });
    }

    it(`answers too_large for a ~100 KiB request (limit ${MAX_REQUEST_BYTES} bytes)`, async () => {
      const data = encodeRequest(oversized(served.valid()), encoding);
      expect(data.byteLength).toBeGreaterThan(MAX_REQUEST_BYTES);
      expect(data.byteLength).toBeLessThan(clientTransport.maxPayload);
      await expectRejected(() => send(served.subject(sidFor(served)), data, headersFor(encoding)), (reply) => expectError(reply, encoding, 'too_large'));
    });

    it('still answers a valid request with ok', async () => {
      // `close` gets a session of its own so the main session stays open for the other tests.
      const sid = served.name === 'close' ? (await client.open(validOpen())).session_id : mainSid;
      const reply = await sendBody(served.subject(sid), served.valid(), encoding);
      expect(encodingFromHeaders(reply.headers)).toBe(encoding);
      expect(decodeReply(reply.data, encoding)).toMatchObject({ ok: true });
    });
  });
});

describe('request size limits', () => {
  /** A valid append whose encoding is exactly `size` bytes (one message, padded content). */
  function appendOfSize(size: number, encoding: Encoding): Uint8Array {
    const body = (content: string) => ({ messages: [{ id: `sized-${size}-${encoding}`, role: 'user', content }] });
    // The padding stays within one MessagePack str16 header (256…65535 chars), so each char adds exactly one byte.
    // Prose rather than one long run of a letter, which the daemon's tokenizer counts slowly.
    const pad = (n: number): string => 'the quick brown fox jumps over the lazy dog '.repeat(Math.ceil(n / 44)).slice(0, n);
    const base = encodeRequest(body(pad(300)), encoding).byteLength;
    const data = encodeRequest(body(pad(300 + size - base)), encoding);
    expect(data.byteLength).toBe(size);
    return data;
  }

  it.each(ENCODINGS)('accepts a %s request of exactly maxRequestBytes and refuses one byte more', async (encoding) => {
    const atLimit = await send(`baton.v1.session.${mainSid}.append`, appendOfSize(MAX_REQUEST_BYTES, encoding), headersFor(encoding));
    expect(decodeReply(atLimit.data, encoding)).toMatchObject({ ok: true, accepted: 1 });
    await expectRejected(
      () => send(`baton.v1.session.${mainSid}.append`, appendOfSize(MAX_REQUEST_BYTES + 1, encoding), headersFor(encoding)),
      (reply) => expectError(reply, encoding, 'too_large'),
    );
  });

  it.each(ENCODINGS)('refuses a %s payload over the server max_payload in the client transport; nothing reaches the daemon', async (encoding) => {
    const subject = `baton.v1.session.${mainSid}.append`;
    const seen: Uint8Array[] = [];
    const tap = tapTransport.subscribe(subject, (msg) => seen.push(Uint8Array.from(msg.data)));
    try {
      await tapTransport.flush();
      const before = await logSnapshot();
      const huge = encodeRequest(oversized({ messages: [{ id: 'huge', role: 'user', content: 'z'.repeat(1024 * 1024) }] }), encoding);
      expect(huge.byteLength).toBeGreaterThan(clientTransport.maxPayload);
      const err = await send(subject, huge, headersFor(encoding)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).code).toBe('too_large');
      // Barrier: a small (malformed) request on the same subject from the same connection. The server forwards
      // messages of one connection in order, so once the tap has it, anything sent earlier would have arrived too.
      const marker = bytes(0xc1);
      expectError(await send(subject, marker, headersFor('msgpack')), 'msgpack', 'decode_error');
      await tapTransport.flush();
      expect(seen).toEqual([marker]);
      expect(await logSnapshot()).toEqual(before);
      expect((await client.status(mainSid)).ok).toBe(true);
    } finally {
      tap.unsubscribe();
    }
  });
});

describe('runtime.drain with bad input', () => {
  // A valid drain would stop the shared daemon, so only bad bodies are sent here; draining is tested in drain.test.ts.
  it.each(ENCODINGS)('answers bad_request for wrong types and unknown fields and changes nothing (%s)', async (encoding) => {
    const before = await logSnapshot();
    for (const [body, path] of [
      [{ timeout_ms: 'soon' }, 'timeout_ms'],
      [{ timeout_ms: -1 }, 'timeout_ms'],
      [{ timeout: 5 }, 'timeout'],
    ] as const) {
      const reply = decodeReply((await sendBody('baton.v1.runtime.drain', body, encoding)).data, encoding);
      expect(reply).toMatchObject({ ok: false, error: { code: 'bad_request' } });
      expect(JSON.stringify(reply)).toContain(path);
    }
    expect(await logSnapshot()).toEqual(before);
    expect((await client.status(mainSid)).ok).toBe(true);
  });
});
