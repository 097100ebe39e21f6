import type { MessagePort } from 'node:worker_threads';
import { fromWireError, toWireError, type WireError } from './wire-error.ts';

/** What one side of a port serves: calls (request → reply) and notes (one-way). */
export interface PortSide {
  readonly calls: Record<string, { readonly request: unknown; readonly reply: unknown }>;
  readonly notes: Record<string, unknown>;
}

/** Handlers for everything a side serves: a missing kind does not compile. */
export interface PortHandlers<S extends PortSide> {
  readonly calls: { readonly [K in keyof S['calls']]: (request: S['calls'][K]['request']) => Promise<S['calls'][K]['reply']> | S['calls'][K]['reply'] };
  readonly notes: { readonly [K in keyof S['notes']]: (note: S['notes'][K]) => void };
}

type Frame =
  | { readonly t: 'call'; readonly id: number; readonly kind: string; readonly body: unknown }
  | { readonly t: 'reply'; readonly id: number; readonly value: unknown }
  | { readonly t: 'fail'; readonly id: number; readonly error: WireError }
  | { readonly t: 'note'; readonly kind: string; readonly body: unknown };

/**
 * Calls and notes over one `MessagePort`, between the main thread and a worker. Calls carry request ids; a handler's
 * error crosses as plain data (`{ code, message, details }`) and is rejected on the caller's side as a
 * `ProtocolError` with the same code, so an error raised in a worker reaches the wire unchanged.
 */
export class PortRpc<Local extends PortSide, Remote extends PortSide> {
  readonly #port: MessagePort;
  readonly #handlers: PortHandlers<Local>;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #nextId = 1;
  #closedError: Error | null = null;
  /** Frames of this turn, posted together: one message (one structured clone) per turn, however many sessions fold. */
  #outbox: Frame[] = [];
  #flushScheduled = false;

  constructor(port: MessagePort, handlers: PortHandlers<Local>) {
    this.#port = port;
    this.#handlers = handlers;
    port.on('message', (frames: readonly Frame[]) => {
      for (const frame of frames) this.#receive(frame);
    });
  }

  #post(frame: Frame): void {
    this.#outbox.push(frame);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    const frames = this.#outbox;
    if (frames.length === 0) return;
    this.#outbox = [];
    try {
      this.#port.postMessage(frames);
    } catch {
      // A value that cannot be cloned fails the whole batch: post frame by frame, and answer a reply that cannot be
      // sent with the error instead.
      for (const frame of frames) {
        try {
          this.#port.postMessage([frame]);
        } catch (err) {
          if (frame.t === 'reply') this.#port.postMessage([{ t: 'fail', id: frame.id, error: toWireError(err) } satisfies Frame]);
        }
      }
    }
  }

  /** Sends a call; resolves with the remote handler's reply, rejects with its error as a `ProtocolError`. */
  call<K extends keyof Remote['calls'] & string>(kind: K, request: Remote['calls'][K]['request']): Promise<Remote['calls'][K]['reply']> {
    if (this.#closedError !== null) return Promise.reject(this.#closedError);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#post({ t: 'call', id, kind, body: request });
    });
  }

  /** Calls sent and not answered yet: the work waiting on the other side. */
  get pendingCalls(): number {
    return this.#pending.size;
  }

  /** Sends a one-way note. */
  notify<K extends keyof Remote['notes'] & string>(kind: K, note: Remote['notes'][K]): void {
    this.#post({ t: 'note', kind, body: note });
  }

  /** Rejects every call still waiting (and every later one) with `error`; closes the port. */
  close(error: Error): void {
    this.#flush();
    this.#closedError = error;
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
    this.#port.close();
  }

  #receive(frame: Frame): void {
    switch (frame.t) {
      case 'call':
        void this.#serve(frame.id, frame.kind, frame.body);
        return;
      case 'reply':
      case 'fail': {
        const pending = this.#pending.get(frame.id);
        this.#pending.delete(frame.id);
        if (pending === undefined) return;
        if (frame.t === 'reply') pending.resolve(frame.value);
        else pending.reject(fromWireError(frame.error));
        return;
      }
      case 'note': {
        const handler = (this.#handlers.notes as Record<string, ((note: unknown) => void) | undefined>)[frame.kind];
        handler?.(frame.body);
        return;
      }
    }
  }

  async #serve(id: number, kind: string, body: unknown): Promise<void> {
    try {
      const handler = (this.#handlers.calls as Record<string, ((request: unknown) => unknown) | undefined>)[kind];
      if (handler === undefined) throw new Error(`no handler for ${kind}`);
      const value = await handler(body);
      this.#post({ t: 'reply', id, value });
    } catch (err) {
      this.#post({ t: 'fail', id, error: toWireError(err) });
    }
  }
}
