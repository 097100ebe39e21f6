import { readFile } from 'node:fs/promises';
import type { NatsAuth, NatsTls, NatsTransportOptions } from '@baton/client';

/** The NATS connection flags every command that connects shares (`--nats-creds`, `--nats-user`, `--nats-tls-*`). */
export interface NatsConnectionFlags {
  /** Comma-separated server URLs. */
  readonly nats: string;
  /** A credentials file (JWT and NKey seed), as `nsc` writes it. */
  readonly natsCreds?: string;
  /** A file holding an NKey user's seed (`SU…`), for servers that know users by their public NKey. */
  readonly natsNkey?: string;
  /** User name; its password comes from `$BATON_NATS_PASSWORD`. */
  readonly natsUser?: string;
  readonly natsTlsCa?: string;
  readonly natsTlsCert?: string;
  readonly natsTlsKey?: string;
  /** Subject prefix of the connection's reply inboxes (default `_INBOX`). */
  readonly natsInboxPrefix?: string;
}

/** A NATS connection option that cannot be used; its message names the flag or variable. */
export class NatsOptionError extends Error {
  override readonly name = 'NatsOptionError';
}

/**
 * The transport options the flags and the environment stand for: the servers, at most one way to authenticate
 * (`--nats-creds`; `--nats-user` with `$BATON_NATS_PASSWORD`; `$BATON_NATS_TOKEN`), and TLS when any `--nats-tls-*`
 * is given (a client certificate needs its key). Throws `NatsOptionError` naming what is wrong.
 */
export async function natsConnectionOptions(flags: NatsConnectionFlags, env: NodeJS.ProcessEnv): Promise<Pick<NatsTransportOptions, 'servers' | 'auth' | 'tls' | 'inboxPrefix'>> {
  const servers = flags.nats
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const token = env['BATON_NATS_TOKEN'];
  const ways = [flags.natsCreds !== undefined, flags.natsNkey !== undefined, flags.natsUser !== undefined, token !== undefined && token !== ''].filter(Boolean).length;
  if (ways > 1) throw new NatsOptionError('use one of --nats-creds, --nats-nkey, --nats-user (with $BATON_NATS_PASSWORD) and $BATON_NATS_TOKEN');
  let auth: NatsAuth | undefined;
  if (flags.natsNkey !== undefined) {
    let seed: string;
    try {
      seed = (await readFile(flags.natsNkey, 'utf8')).trim();
    } catch (err) {
      throw new NatsOptionError(`--nats-nkey: cannot read ${flags.natsNkey}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!/^SU[A-Z2-7]+$/.test(seed)) throw new NatsOptionError(`--nats-nkey: ${flags.natsNkey} does not hold an NKey user seed (SU…)`);
    auth = { nkeySeed: seed };
  } else if (flags.natsCreds !== undefined) {
    try {
      auth = { credentials: await readFile(flags.natsCreds, 'utf8') };
    } catch (err) {
      throw new NatsOptionError(`--nats-creds: cannot read ${flags.natsCreds}: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else if (flags.natsUser !== undefined) {
    const pass = env['BATON_NATS_PASSWORD'];
    if (pass === undefined || pass === '') throw new NatsOptionError('--nats-user needs its password in $BATON_NATS_PASSWORD');
    auth = { user: flags.natsUser, pass };
  } else if (token !== undefined && token !== '') {
    auth = { token };
  }
  let tls: NatsTls | undefined;
  if (flags.natsTlsCa !== undefined || flags.natsTlsCert !== undefined || flags.natsTlsKey !== undefined) {
    if ((flags.natsTlsCert === undefined) !== (flags.natsTlsKey === undefined)) throw new NatsOptionError('--nats-tls-cert and --nats-tls-key go together');
    tls = {
      ...(flags.natsTlsCa !== undefined ? { caFile: flags.natsTlsCa } : {}),
      ...(flags.natsTlsCert !== undefined ? { certFile: flags.natsTlsCert } : {}),
      ...(flags.natsTlsKey !== undefined ? { keyFile: flags.natsTlsKey } : {}),
    };
  }
  return {
    servers,
    ...(auth !== undefined ? { auth } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(flags.natsInboxPrefix !== undefined ? { inboxPrefix: flags.natsInboxPrefix } : {}),
  };
}
