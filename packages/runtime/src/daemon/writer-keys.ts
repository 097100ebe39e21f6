/**
 * Agents' keys for their sessions' writers, by session (an embedded gateway hands over the key of its agent's latest
 * call): held in memory only, never logged, and handed to a session's worker whenever the session is loaded there.
 */
export class WriterKeys {
  readonly #keys = new Map<string, string>();
  readonly #send: (sessionId: string, key: string | null) => void;
  readonly #resident: (sessionId: string) => boolean;

  /** `send` hands a key to the session's worker; `resident` says whether the session is loaded now. */
  constructor(send: (sessionId: string, key: string | null) => void, resident: (sessionId: string) => boolean) {
    this.#send = send;
    this.#resident = resident;
  }

  /** The key the session's writers use from now on; null: the daemon's own. A loaded session's worker gets it now. */
  set(sessionId: string, key: string | null): void {
    if ((this.#keys.get(sessionId) ?? null) === key) return;
    if (key === null) this.#keys.delete(sessionId);
    else this.#keys.set(sessionId, key);
    if (this.#resident(sessionId)) this.#send(sessionId, key);
  }

  /** The session was just loaded in a worker: it gets the session's key, if there is one. */
  loaded(sessionId: string): void {
    const key = this.#keys.get(sessionId);
    if (key !== undefined) this.#send(sessionId, key);
  }

  /** Forgets the session's key (the session closed or moved to another daemon). */
  delete(sessionId: string): void {
    this.#keys.delete(sessionId);
  }
}
