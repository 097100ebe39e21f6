import { BatonClient, BatonRequestError, TransportError } from '@baton/client';
import type { HandoffReply, HandoffRequest, ProviderApi } from '@baton/protocol';
import type { CliIo } from '../cli-io.ts';
import { connectNats } from '../daemon/nats-connection.ts';
import { EXIT } from '../exit-codes.ts';
import type { HandoffFlags } from '../flags/command-flags.ts';

/** Exit codes of `baton handoff`. */
export const HANDOFF_EXIT = { ok: EXIT.ok, refused: EXIT.failed, notFound: EXIT.notFound } as const;

/** The window a model named without `--window` is fitted to (the gateway's own default for a model it does not know). */
const DEFAULT_WINDOW = 128_000;

/**
 * The base URL the new agent is configured with: the gateway's origin, `/h/<token>`, and `/v1` for the OpenAI APIs
 * (their SDKs append the endpoint to a base URL that ends in `/v1`; Anthropic's SDK and Claude Code add `/v1` themselves).
 */
export function handoffBaseUrl(gateway: string, token: string, api: ProviderApi): string {
  const origin = gateway.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${origin}/h/${token}${api === 'anthropic-messages' ? '' : '/v1'}`;
}

/** The request the flags stand for; the model's id or window the flags leave out come from the session's listing. */
async function handoffRequest(client: BatonClient, session: string, options: HandoffFlags): Promise<HandoffRequest> {
  let model: HandoffRequest['model'];
  if (options.model !== undefined || options.window !== undefined) {
    const listed = options.model === undefined ? (await client.runtimeSessions({ limit: 1000 })).sessions.find((s) => s.session_id === session) : undefined;
    model = { id: options.model ?? listed?.model ?? 'unknown', context_window: options.window ?? DEFAULT_WINDOW };
  }
  return {
    ...(options.to !== undefined ? { to: options.to } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(options.wait !== undefined ? { wait_ms: options.wait } : {}),
    ...(options.ttl !== undefined ? { ttl_ms: options.ttl } : {}),
  };
}

function describe(reply: HandoffReply, session: string, url: string): string[] {
  const from = `from ${session}${reply.checkpoint_version !== null ? ` (checkpoint v${reply.checkpoint_version}, watermark ${reply.watermark ?? '–'})` : ' (no checkpoint yet)'}`;
  const writer = reply.writer === 'awaited' ? 'its running writer was awaited' : reply.writer === 'still_running' ? 'its writer still runs (the last checkpoint was used)' : 'no writer ran';
  return [
    url,
    `  ${from}: ${reply.basis}, ${writer}`,
    `  for ${reply.to ?? 'the same API'}; the first credential that calls it owns the new session; expires ${new Date(reply.expires_at).toISOString()}`,
  ];
}

/**
 * `baton handoff <session>`: asks the daemon for a one-time handoff token and prints the handoff base URL to give the
 * new agent (`--json`: the reply with `base_url`). An unknown session: exit 2; a refusal: exit 1.
 */
export async function runHandoff(session: string, options: HandoffFlags, io: CliIo, env: NodeJS.ProcessEnv = {}): Promise<number> {
  const transport = await connectNats('handoff', options, env, io, { name: `baton-handoff-${process.pid}`, maxReconnectAttempts: 0 });
  if (typeof transport === 'number') return transport;
  const client = new BatonClient(transport, { timeoutMs: options.timeout, ...(options.prefix !== undefined ? { prefix: options.prefix } : {}) });
  try {
    const reply = await client.handoff(session, await handoffRequest(client, session, options), { timeoutMs: options.timeout + (options.wait ?? 30_000) });
    const url = handoffBaseUrl(options.gateway, reply.token, reply.to ?? 'openai-chat');
    if (options.json === true) io.out(JSON.stringify({ ...reply, base_url: url }));
    else for (const line of describe(reply, session, url)) io.out(line);
    return HANDOFF_EXIT.ok;
  } catch (err) {
    if (err instanceof TransportError && (err.code === 'no_responders' || err.code === 'timeout')) {
      io.err(`baton handoff: no daemon answered on prefix ${client.subjects.prefix} at ${options.nats} (${err.code === 'timeout' ? 'no reply in time' : 'nothing subscribes to it'})`);
      return HANDOFF_EXIT.notFound;
    }
    if (err instanceof BatonRequestError) {
      io.err(`baton handoff: the daemon answered ${err.code}: ${err.message}`);
      return err.code === 'not_found' ? HANDOFF_EXIT.notFound : HANDOFF_EXIT.refused;
    }
    throw err;
  } finally {
    await transport.close();
  }
}
