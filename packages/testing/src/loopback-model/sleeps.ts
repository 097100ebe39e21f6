/** A cancellable set of sleeps: `wakeAll()` (on close) wakes every sleeper so no timer outlives the server. */
export class Sleeps {
  readonly #pending = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = { timer: setTimeout(() => { this.#pending.delete(entry); resolve(); }, ms), wake: resolve };
      this.#pending.add(entry);
    });
  }

  wakeAll(): void {
    for (const entry of this.#pending) { clearTimeout(entry.timer); entry.wake(); }
    this.#pending.clear();
  }
}
