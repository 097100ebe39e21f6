import type { InboundMessage, Transport, TransportSubscription } from '@baton/client';
import { ProtocolError, parseRequest, type Encoding } from '@baton/protocol';
import type { z } from 'zod';
import { answerRequest, type RequestContext } from './answer-request.ts';

/** A reply body as a handler returns it: the reply schema's input without `ok`, which the daemon adds. */
export type ReplyBody<R extends z.ZodType> = Omit<z.input<R>, 'ok'>;

/** What serves one request: its decoded value, the session id its subject names (if any) and its encoding. */
export type RequestHandler = (value: unknown, sessionId: string | null, encoding: Encoding) => Promise<object>;

/**
 * The daemon's request subjects: subscribes them, keeps the session verbs' handlers (for the subjects a router
 * subscribes per session or per project) and answers every request through `answerRequest`.
 */
export class RequestDispatch {
  readonly #transport: Transport;
  /** What answering a request needs, asked once per request. */
  readonly #ctx: () => RequestContext;
  readonly #subs: TransportSubscription[] = [];
  /** The session request handlers, by verb. */
  readonly verbs = new Map<string, (msg: InboundMessage) => void>();
  /** The same verbs on a project's subjects (the session checked against the project). */
  readonly scopedVerbs = new Map<string, (msg: InboundMessage) => void>();

  constructor(transport: Transport, ctx: () => RequestContext) {
    this.#transport = transport;
    this.#ctx = ctx;
  }

  /** Subscribes `subject`, its requests parsed with `schema` and answered by `handler`. */
  serve<S extends z.ZodType, R extends z.ZodType>(
    subject: string,
    schema: S,
    _reply: R,
    handler: (body: z.output<S>, sessionId: string | null, encoding: Encoding) => Promise<ReplyBody<R>>,
    options: { queue?: string; sessionIndex?: number } = {},
  ): TransportSubscription {
    return this.listen(subject, this.dispatch(schema, handler, options.sessionIndex ?? null), options.queue);
  }

  /** Subscribes `subject` (in `queue`, when given); `unsubscribeAll` drops it with the others. */
  listen(subject: string, dispatch: (msg: InboundMessage) => void, queue?: string): TransportSubscription {
    const sub = this.#transport.subscribe(subject, dispatch, queue !== undefined ? { queue } : {});
    this.#subs.push(sub);
    return sub;
  }

  /** A message handler that parses the request with `schema` and answers it with `handler`. */
  dispatch<S extends z.ZodType>(schema: S, handler: (body: z.output<S>, sessionId: string | null, encoding: Encoding) => Promise<object>, sessionIndex: number | null): (msg: InboundMessage) => void {
    return (msg) => {
      void this.handle(msg, (value, sid, enc) => handler(parseRequest(schema, value), sid, enc), sessionIndex);
    };
  }

  /** Answers one request (see `answerRequest`). */
  handle(msg: InboundMessage, handler: RequestHandler, sessionIndex: number | null): Promise<void> {
    return answerRequest(msg, handler, sessionIndex, this.#ctx());
  }

  /** Unsubscribes every subject subscribed through `listen` (a refusal to serve, or a stop). */
  unsubscribeAll(): void {
    for (const sub of this.#subs) sub.unsubscribe();
  }
}

/** The session id a session subject named (always present on session subjects). */
export function requireSessionId(id: string | null): string {
  if (id === null) throw new ProtocolError('internal', 'missing session id');
  return id;
}
