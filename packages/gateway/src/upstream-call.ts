import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** Takes one chunk of the reply body; false pauses the upstream until `UpstreamCall.resume()`. */
export type BodySink = (chunk: Buffer) => boolean;

/**
 * One request to the upstream, driven by undici's dispatcher callbacks: the status and headers resolve `started`, the
 * body goes chunk by chunk to the sink given to `consume` (as undici reads it, with no stream or promise per chunk in
 * between; chunks that arrive before a sink is there wait for it), and `abort` ends it at any point.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  /** Resolves once the reply's status and headers are in; rejects when the request fails before that. */
  readonly started: Promise<void>;
  #controller: Dispatcher.DispatchController | null = null;
  #abortReason: Error | null = null;
  #isStarted = false;
  #resolveStarted!: () => void;
  #rejectStarted!: (err: Error) => void;
  #sink: BodySink | null = null;
  /** Chunks that came before a sink. */
  #early: Buffer[] = [];
  #ended = false;
  #error: Error | null = null;
  #done: { resolve: () => void; reject: (err: Error) => void } | null = null;

  constructor() {
    this.started = new Promise<void>((resolve, reject) => {
      this.#resolveStarted = resolve;
      this.#rejectStarted = reject;
    });
    // A caller that stops waiting (an aborted call) leaves no unhandled rejection behind.
    this.started.catch(() => {});
  }

  /** Whether `abort` was called. */
  get aborted(): boolean {
    return this.#abortReason !== null;
  }

  /** Ends the request (before it is sent, while it waits for its reply, or while the body arrives). */
  abort(reason: Error = new Error('aborted')): void {
    if (this.#abortReason !== null) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  /**
   * Delivers the body to `sink` (first what arrived already); resolves once the body is complete, rejects when the
   * request fails, is aborted, or the sink throws.
   */
  consume(sink: BodySink): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#done = { resolve, reject };
      this.#sink = sink;
      const early = this.#early;
      this.#early = [];
      let more = true;
      for (const chunk of early) more = this.#deliver(chunk) && more;
      if (this.#error !== null) reject(this.#error);
      else if (this.#ended) resolve();
      else if (more) this.#controller?.resume();
      else this.#controller?.pause();
    });
  }

  /** Lets a paused body flow again. */
  resume(): void {
    this.#controller?.resume();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason !== null) controller.abort(this.#abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // Informational replies (100 Continue, 103 Early Hints) are not the reply.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
    this.#isStarted = true;
    this.#resolveStarted();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#sink === null) {
      this.#early.push(chunk);
      controller.pause();
      return;
    }
    if (!this.#deliver(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#done?.resolve();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const err = this.#abortReason ?? error;
    if (!this.#isStarted) {
      this.#rejectStarted(err);
      return;
    }
    this.#error ??= err;
    this.#done?.reject(this.#error);
  }

  /** Hands one chunk to the sink; a sink that throws ends the call with its error. */
  #deliver(chunk: Buffer): boolean {
    if (this.#error !== null) return false;
    try {
      return (this.#sink as BodySink)(chunk);
    } catch (err) {
      this.#error = err instanceof Error ? err : new Error(String(err));
      this.#done?.reject(this.#error);
      this.#controller?.abort(this.#error);
      return false;
    }
  }
}
