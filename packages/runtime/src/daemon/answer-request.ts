import type { InboundMessage } from '@baton/client';
import { ProtocolError, contentTypeHeaders, projectOfSubject, decodeRequest, encodeReply, encodingFromHeaders, type Encoding, type ErrorCode, type ErrorReply, type Subjects } from '@baton/protocol';
import { protocolErrorOf } from '../errors/protocol-error-of.ts';
import type { LogLevel } from '../host/worker-messages.ts';
import { requestVerb, type DaemonObserver } from './daemon-observer.ts';
import { findUnfitValue } from './find-unfit-value.ts';

/** What answering a request needs to know of the daemon. */
export interface RequestContext {
  /** Largest request accepted, in bytes. */
  readonly maxRequestBytes: number;
  readonly subjects: Subjects;
  readonly draining: () => boolean;
  /** Whether start-up finished (waiting for it a bounded time). */
  readonly ready: () => Promise<boolean>;
  /** The `unavailable` error a request gets while start-up has not finished (it says what the daemon waits for). */
  readonly notReady: () => ProtocolError;
  readonly logger: (level: LogLevel, msg: string, data?: Record<string, unknown>) => void;
  readonly observer?: DaemonObserver;
}

/** The error reply for anything thrown while serving a request (the code `protocolErrorOf` gives it). */
export function errorReplyOf(err: unknown): ErrorReply {
  return protocolErrorOf(err).toReply();
}

/**
 * Answers one request: checks its size, decodes it (in the encoding its headers name), refuses values no schema may
 * hold, refuses work while draining or before start-up repair finished (the runtime overview requests are answered
 * throughout), runs `handler` with the session id the subject names, and replies `{ ok: true, … }` or the error reply
 * with its stable code. Tells the observer of every answer.
 */
export async function answerRequest(
  msg: InboundMessage,
  handler: (value: unknown, sessionId: string | null, encoding: Encoding) => Promise<object>,
  sessionIndex: number | null,
  ctx: RequestContext,
): Promise<void> {
  // The headers alone fix the reply's encoding, so a request that fails to decode (or is too large) is still
  // answered in the encoding it asked for: a malformed JSON request gets a JSON error reply.
  const encoding: Encoding = encodingFromHeaders(msg.headers);
  // Measured for the observer only: a duration, not a time the daemon decides anything by, so not the Clock's.
  const started = performance.now();
  let code: ErrorCode | 'ok' = 'ok';
  let answered: Record<string, unknown> | null = null;
  try {
    const limit = ctx.maxRequestBytes;
    if (msg.data.byteLength > limit) {
      throw new ProtocolError('too_large', `request of ${msg.data.byteLength} bytes exceeds the limit of ${limit} bytes`);
    }
    const decoded = decodeRequest(msg.data, msg.headers);
    const unfit = findUnfitValue(decoded.value);
    if (unfit !== null) throw new ProtocolError('bad_request', `invalid request: ${unfit.path}: ${unfit.message}`, [unfit]);
    // The runtime requests only read or drain: they are answered while draining and during start-up repair.
    const s = ctx.subjects;
    const overview =
      msg.subject === s.runtimeStatus ||
      msg.subject === s.runtimeDrain ||
      msg.subject === s.runtimeSessions ||
      (msg.subject.endsWith('.sessions') && projectOfSubject(msg.subject, s.prefix) !== null);
    if (ctx.draining() && !overview) {
      throw new ProtocolError('unavailable', 'the daemon is draining and accepts no new work');
    }
    // Start-up (repair of interrupted memory commits and stale staging; in cluster mode, the join) must finish before
    // any session is served.
    if (!overview && !(await ctx.ready())) throw ctx.notReady();
    const sessionId = sessionIndex === null ? null : (msg.subject.split('.')[sessionIndex] ?? null);
    const body = await handler(decoded.value, sessionId, encoding);
    msg.respond(encodeReply({ ok: true, ...body }, encoding), contentTypeHeaders(encoding));
    answered = body as Record<string, unknown>;
  } catch (err) {
    const reply = errorReplyOf(err);
    code = reply.error.code;
    if (reply.error.code === 'internal') {
      // The stack where it was thrown: a worker thread's, for an error that crossed from one (its cause).
      const origin = err instanceof Error ? (err.cause instanceof Error ? err.cause : err) : null;
      ctx.logger('error', 'request failed', { subject: msg.subject, error: reply.error.message, ...(origin?.stack !== undefined ? { stack: origin.stack } : {}) });
    }
    try {
      msg.respond(encodeReply(reply, encoding), contentTypeHeaders(encoding));
    } catch (replyErr) {
      ctx.logger('error', 'reply failed', { subject: msg.subject, error: String(replyErr) });
    }
  }
  ctx.observer?.requestAnswered({ verb: requestVerb(ctx.subjects, msg.subject), seconds: (performance.now() - started) / 1000, code, body: answered });
}
