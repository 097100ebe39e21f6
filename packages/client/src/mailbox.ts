/**
 * Per-key serial execution: tasks for one key run one at a time in arrival order (PROTOCOL "Limits": a session
 * accepts requests one at a time), tasks for different keys run concurrently.
 */
export class Mailbox {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(task, task);
    const tail = next.catch(() => {});
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return next;
  }

  /** Resolves when every task queued so far has finished. */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.allSettled([...this.#tails.values()]);
  }
}
