/** Worker-thread deaths with its calls in flight after which a session is quarantined (the first makes it a suspect). */
export const DEFAULT_DEATHS_TO_QUARANTINE = 2;

/**
 * Which sessions may be killing their worker threads. A thread that dies (an out-of-memory under its heap limit, say)
 * takes the calls in flight on it along; any session with a call among them may be the cause, and loading it again
 * into the next thread would kill that one too. So each such session becomes a suspect: its calls are sent alone
 * (`CallGate`), and a suspect whose call is in flight at another death is the cause beyond doubt and is convicted
 * once it reaches `deathsToQuarantine`. A suspect whose call (other than its load, which only replays its log) is
 * answered is cleared.
 */
export class WorkerSuspects {
  readonly #deathsToQuarantine: number;
  readonly #deaths = new Map<string, number>();

  constructor(deathsToQuarantine: number = DEFAULT_DEATHS_TO_QUARANTINE) {
    if (!Number.isInteger(deathsToQuarantine) || deathsToQuarantine < 1) throw new RangeError(`deathsToQuarantine must be a positive integer, not ${deathsToQuarantine}`);
    this.#deathsToQuarantine = deathsToQuarantine;
  }

  has(sessionId: string): boolean {
    return this.#deaths.has(sessionId);
  }

  /** A thread died with calls of `inFlight` in flight: the sessions convicted now, with the deaths each was in. */
  died(inFlight: Iterable<string>): Map<string, number> {
    const convicted = new Map<string, number>();
    for (const sessionId of inFlight) {
      const deaths = (this.#deaths.get(sessionId) ?? 0) + 1;
      if (deaths >= this.#deathsToQuarantine) {
        this.#deaths.delete(sessionId);
        convicted.set(sessionId, deaths);
      } else this.#deaths.set(sessionId, deaths);
    }
    return convicted;
  }

  /** A call of the session was answered: it did not kill its thread. */
  cleared(sessionId: string): void {
    this.#deaths.delete(sessionId);
  }
}
