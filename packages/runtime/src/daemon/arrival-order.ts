/**
 * Keeps the requests of one key (a session) in the order they arrived across an asynchronous check made before
 * each is started: a later request's check waits until every earlier one has been started (or refused), so a
 * check that takes longer for one request (a lease re-check) cannot let a later request of the same session start
 * first. Requests of different keys do not wait for each other.
 */
export class ArrivalOrder {
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Runs `check` once every earlier request of `key` has started, then `start` right after it (in the same
   * microtask); a failing check rejects with its error and lets the next request go on.
   */
  async run<T>(key: string, check: () => Promise<void>, start: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.#tails.set(key, mine);
    const release = (): void => {
      done();
      if (this.#tails.get(key) === mine) this.#tails.delete(key);
    };
    try {
      if (previous !== undefined) await previous;
      await check();
    } catch (err) {
      release();
      throw err;
    }
    const running = start();
    release();
    return await running;
  }

  /** Keys with a request between arrival and start (for tests). */
  get pending(): number {
    return this.#tails.size;
  }
}
