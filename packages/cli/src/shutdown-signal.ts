const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** `received` resolves on the first SIGTERM/SIGINT; the handlers are removed then, or by `dispose()`. */
export function shutdownSignal(): { received: Promise<string>; dispose(): void } {
  let on: (signal: string) => void = () => {};
  const dispose = (): void => {
    for (const s of SHUTDOWN_SIGNALS) process.off(s, on);
  };
  const received = new Promise<string>((resolveSignal) => {
    on = (signal) => {
      dispose();
      resolveSignal(signal);
    };
  });
  for (const s of SHUTDOWN_SIGNALS) process.on(s, on);
  return { received, dispose };
}

/** The first line of an error's message, for one-line CLI errors. */
export function errorLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}
