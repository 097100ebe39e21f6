import { BatonClient, BatonRequestError, TransportError } from '@baton/client';
import { DEFAULT_SESSIONS_PAGE, type RuntimeSession } from '@baton/protocol';
import type { CliIo } from '../cli-io.ts';
import { sessionsTable, statusBlock } from '../format/runtime-format.ts';
import { connectNats } from '../daemon/nats-connection.ts';
import type { SessionsFlags, StatusFlags } from '../flags/command-flags.ts';
import { EXIT } from '../exit-codes.ts';

/** `baton status`'s options: its flags as parsed (`timeout` in milliseconds). */
export type RuntimeCommandOptions = StatusFlags;

/** `baton sessions`' options: its flags as parsed. */
export type SessionsOptions = SessionsFlags;

/** Exit codes of `baton status` and `baton sessions` (`notServing`: the daemon answered but does not serve yet). */
export const RUNTIME_EXIT = { ok: EXIT.ok, refused: EXIT.failed, unreachable: EXIT.notFound, notServing: EXIT.notServing } as const;

/**
 * Connects to NATS, runs one command's requests and closes the connection. No NATS server, or no daemon answering on
 * the prefix (`no_responders`, `timeout`): one line on stderr naming the URL, exit 2. An error reply: exit 1.
 */
async function withDaemon(command: string, options: RuntimeCommandOptions & { readonly project?: string }, io: CliIo, env: NodeJS.ProcessEnv, run: (client: BatonClient) => Promise<number>): Promise<number> {
  const transport = await connectNats(command, options, env, io, { name: `baton-${command}-${process.pid}`, maxReconnectAttempts: 0 });
  if (typeof transport === 'number') return transport;
  const client = new BatonClient(transport, {
    timeoutMs: options.timeout,
    ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
    ...(options.project !== undefined ? { project: options.project } : {}),
  });
  try {
    return await run(client);
  } catch (err) {
    if (err instanceof TransportError && (err.code === 'no_responders' || err.code === 'timeout')) {
      const why = err.code === 'timeout' ? `no reply within ${options.timeout} ms` : 'nothing subscribes to it';
      io.err(`baton ${command}: no daemon answered on prefix ${client.subjects.prefix} at ${options.nats} (${why})`);
      return RUNTIME_EXIT.unreachable;
    }
    if (err instanceof TransportError && err.code === 'forbidden') {
      io.err(`baton ${command}: ${err.message} (a project's NATS user reaches its own project only: --project <id>)`);
      return RUNTIME_EXIT.refused;
    }
    if (err instanceof BatonRequestError) {
      io.err(`baton ${command}: the daemon answered ${err.code}: ${err.message}`);
      return RUNTIME_EXIT.refused;
    }
    throw err;
  } finally {
    await transport.close();
  }
}

/**
 * `baton status`: the daemon's overview from `runtime.status`, as one block or (`--json`) the reply as JSON; exit 3
 * when the daemon answers but does not serve (still starting, or unable to join its cluster: the block says why).
 */
export async function runStatus(options: RuntimeCommandOptions, io: CliIo, env: NodeJS.ProcessEnv = {}): Promise<number> {
  return await withDaemon('status', options, io, env, async (client) => {
    const reply = await client.runtimeStatus();
    if (options.json === true) io.out(JSON.stringify(reply));
    else for (const line of statusBlock(reply, options.nats)) io.out(line);
    return reply.serving === false ? RUNTIME_EXIT.notServing : RUNTIME_EXIT.ok;
  });
}

/**
 * `baton sessions`: the daemon's sessions from `runtime.sessions`, as an aligned table or (`--json`) the reply as
 * JSON. With `limit`, one page (its `next` printed); without, every page, joined into one reply without `next`.
 */
export async function runSessions(options: SessionsOptions, io: CliIo, env: NodeJS.ProcessEnv = {}): Promise<number> {
  return await withDaemon('sessions', options, io, env, async (client) => {
    const after = options.after !== undefined ? { after: options.after } : {};
    let reply = await client.runtimeSessions({ ...after, ...(options.limit !== undefined ? { limit: options.limit } : {}) });
    if (options.limit === undefined) {
      const sessions: RuntimeSession[] = [...reply.sessions];
      // Each page's request goes to every daemon on the prefix and the first reply wins: follow one daemon only.
      while (reply.next !== undefined) {
        const page = await client.runtimeSessions({ after: reply.next, limit: DEFAULT_SESSIONS_PAGE });
        if (page.daemon_id !== reply.daemon_id) {
          io.err(`baton sessions: pages came from two daemons (${reply.daemon_id}, ${page.daemon_id}) on prefix ${client.subjects.prefix}; use --limit to page`);
          return RUNTIME_EXIT.refused;
        }
        sessions.push(...page.sessions);
        reply = page;
      }
      reply = { ok: true, daemon_id: reply.daemon_id, sessions };
    }
    if (options.json === true) io.out(JSON.stringify(reply));
    else for (const line of sessionsTable(reply)) io.out(line);
    return RUNTIME_EXIT.ok;
  });
}
