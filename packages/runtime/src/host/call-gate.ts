/**
 * Admission of calls to one actor host: shared calls run side by side; an exclusive call runs alone, once every call
 * before it has been answered, and holds back the calls that come after it until it is answered. First come, first
 * served: a shared call arriving while an exclusive one waits queues behind it, so a busy host cannot starve it.
 *
 * The host pool sends a suspect session's calls exclusively (see `WorkerSuspects`): if the thread dies then, no other
 * session's call was in flight to share the blame.
 */
export class CallGate {
  #shared = 0;
  #exclusive = false;
  readonly #waiting: { readonly exclusive: boolean; readonly go: () => void }[] = [];

  /** Enters at once (null: the caller may go now) or resolves when it may. Each entry is left once, by `leave`. */
  enter(exclusive: boolean): Promise<void> | null {
    if (this.#waiting.length === 0 && this.#mayEnter(exclusive)) {
      this.#take(exclusive);
      return null;
    }
    return new Promise((go) => this.#waiting.push({ exclusive, go }));
  }

  leave(exclusive: boolean): void {
    if (exclusive) this.#exclusive = false;
    else this.#shared--;
    for (let next = this.#waiting[0]; next !== undefined && this.#mayEnter(next.exclusive); next = this.#waiting[0]) {
      this.#waiting.shift();
      this.#take(next.exclusive);
      next.go();
    }
  }

  #mayEnter(exclusive: boolean): boolean {
    return !this.#exclusive && (!exclusive || this.#shared === 0);
  }

  #take(exclusive: boolean): void {
    if (exclusive) this.#exclusive = true;
    else this.#shared++;
  }
}
