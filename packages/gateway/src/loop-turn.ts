/**
 * Resolves once the event loop has finished the I/O callbacks of its current turn (on `setImmediate`), one promise
 * shared by every caller of the same turn. The appends of recorded calls wait for it: calls whose replies completed
 * in the same turn then send their appends together, which the NATS client writes to its socket in one go (it writes
 * what was queued once the microtasks run), instead of one write, and one wake-up of the daemon, per call.
 */
let pending: Promise<void> | null = null;

export function loopTurn(): Promise<void> {
  pending ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      pending = null;
      resolve();
    }),
  );
  return pending;
}
