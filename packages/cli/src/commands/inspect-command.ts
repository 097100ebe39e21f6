import { InspectorError, startInspector } from '@baton/inspector';
import type { CliIo } from '../cli-io.ts';
import { errorLine, shutdownSignal } from '../shutdown-signal.ts';
import { EXIT } from '../exit-codes.ts';
import type { INSPECT_FLAGS } from '../flags/command-flags.ts';
import type { FlagValues } from '../flags/flag.ts';

/** `baton inspect`'s options: its flags as parsed. */
export type InspectOptions = FlagValues<typeof INSPECT_FLAGS>;

/** Exit codes of `baton inspect`: 0 stopped by a signal, 1 could not listen, 2 no event log in the data directory. */
export const INSPECT_EXIT = { ok: EXIT.ok, failed: EXIT.failed, notFound: EXIT.notFound } as const;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * `baton inspect`: serves the web inspector over the data directory (its event log opened read-only, so a daemon may
 * keep running on it) and prints the URL; runs until SIGTERM/SIGINT.
 */
export async function runInspect(options: InspectOptions, io: CliIo): Promise<number> {
  const signal = shutdownSignal();
  let server;
  try {
    server = await startInspector({ dataDir: options.dataDir, host: options.host, port: options.port });
  } catch (err) {
    signal.dispose();
    if (err instanceof InspectorError) {
      io.err(`baton inspect: ${err.message}`);
      return INSPECT_EXIT.notFound;
    }
    io.err(`baton inspect: cannot serve on ${options.host}:${options.port}: ${errorLine(err)}`);
    return INSPECT_EXIT.failed;
  }
  if (!LOOPBACK.has(options.host)) io.err(`baton inspect: warning: listening on ${options.host}, not loopback: whoever reaches it can read every session in the log`);
  io.out(`baton inspect: ${server.url} (read-only view of ${options.dataDir}; Ctrl-C stops)`);
  await signal.received;
  await server.close();
  return INSPECT_EXIT.ok;
}
