import { readFile } from 'node:fs/promises';
import { NatsTransport, type NatsAuth, type NatsTls, type NatsTransportOptions } from '@baton/client';
import type { CliIo } from '../cli-io.ts';
import { EXIT } from '../exit-codes.ts';
import type { NatsFlags } from '../flags/command-flags.ts';
import { envName, envValue } from '../flags/settings-table.ts';
import { errorLine } from '../shutdown-signal.ts';

/** The NATS connection flags every command that connects shares (`--nats`, `--nats-creds`, `--nats-user`, `--nats-tls-*`, …). */
export type NatsConnectionFlags = Omit<NatsFlags, 'prefix'>;

/** A NATS connection option that cannot be used; its message names the flag or variable. */
export class NatsOptionError extends Error {
  override readonly name = 'NatsOptionError';
}

/**
 * The transport options the flags and the environment stand for: the servers, at most one way to authenticate
 * (`--nats-creds`; `--nats-nkey`; `--nats-user` with its password in the environment; a token in the environment), and
 * TLS when any `--nats-tls-*` is given (a client certificate needs its key). Throws `NatsOptionError` naming what is
 * wrong.
 */
export async function natsConnectionOptions(flags: NatsConnectionFlags, env: NodeJS.ProcessEnv): Promise<Pick<NatsTransportOptions, 'servers' | 'auth' | 'tls' | 'inboxPrefix'>> {
  const servers = flags.nats
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const token = envValue(env, 'natsToken');
  const ways = [flags.natsCreds !== undefined, flags.natsNkey !== undefined, flags.natsUser !== undefined, token !== undefined].filter(Boolean).length;
  if (ways > 1) throw new NatsOptionError(`use one of --nats-creds, --nats-nkey, --nats-user (with $${envName('natsPassword')}) and $${envName('natsToken')}`);
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
    const pass = envValue(env, 'natsPassword');
    if (pass === undefined) throw new NatsOptionError(`--nats-user needs its password in $${envName('natsPassword')}`);
    auth = { user: flags.natsUser, pass };
  } else if (token !== undefined) {
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

/**
 * Connects the way every command does: flags that cannot be used exit `EXIT.failed`, a connection that fails (no
 * server, refused credentials) exits `EXIT.notFound`, each with one line on stderr naming the command.
 */
export async function connectNats(
  command: string,
  flags: NatsConnectionFlags,
  env: NodeJS.ProcessEnv,
  io: CliIo,
  extra: Partial<Pick<NatsTransportOptions, 'name' | 'maxReconnectAttempts'>>,
): Promise<NatsTransport | typeof EXIT.failed | typeof EXIT.notFound> {
  let connect;
  try {
    connect = await natsConnectionOptions(flags, env);
  } catch (err) {
    if (!(err instanceof NatsOptionError)) throw err;
    io.err(`baton ${command}: ${err.message}`);
    return EXIT.failed;
  }
  try {
    return await NatsTransport.connect({ ...connect, ...extra });
  } catch (err) {
    io.err(`baton ${command}: cannot connect to NATS at ${flags.nats}: ${errorLine(err)}`);
    return EXIT.notFound;
  }
}
