import { ProtocolError } from '@baton/protocol';
import type { Clock, TimerHandle } from '../time/clock.ts';

/** How long a write the log refused for want of storage waits before it is tried again. */
export const STORAGE_RETRY_MS = 1_000;

/** Whether `err` is the event log's refusal of a write it could not make durable (`unavailable`, reason `storage`). */
export function isStorageRefusal(err: unknown): boolean {
  return err instanceof ProtocolError && err.code === 'unavailable' && (err.details as { reason?: unknown } | undefined)?.reason === 'storage';
}

/**
 * Inputs that no request waits for (a writer's settlement, a rebuild's result from a worker) must reach the log
 * eventually, or their session stays stuck (a writer slot never freed): one the log refuses for want of storage is
 * tried again every `delayMs` until it is taken, or until `stop()`.
 */
export class StorageRetry {
  readonly #clock: Clock;
  readonly #delayMs: number;
  readonly #timers = new Set<TimerHandle>();
  #stopped = false;

  constructor(clock: Clock, delayMs: number = STORAGE_RETRY_MS) {
    this.#clock = clock;
    this.#delayMs = delayMs;
  }

  /** Runs `attempt`; `retrying` is told of each refusal that will be tried again, `failed` of any other failure. */
  run(attempt: () => Promise<void>, retrying: (err: unknown) => void, failed: (err: unknown) => void): void {
    attempt().catch((err: unknown) => {
      if (this.#stopped || !isStorageRefusal(err)) {
        failed(err);
        return;
      }
      retrying(err);
      const timer = this.#clock.setTimeout(() => {
        this.#timers.delete(timer);
        this.run(attempt, retrying, failed);
      }, this.#delayMs);
      this.#timers.add(timer);
    });
  }

  /** Tries nothing more (on shutdown). */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers) this.#clock.clearTimeout(timer);
    this.#timers.clear();
  }
}
