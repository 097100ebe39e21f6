import { TransportError, type Transport } from '@baton/client';
import { contentTypeHeaders, decodeReply, encodeReply, type Subjects } from '@baton/protocol';

/**
 * Another daemon already serves this daemon's subjects on the same NATS, and this one does not run in cluster mode:
 * two daemons each with its own data directory would split sessions between them (an `open` or `append` answered by
 * either one), so this one refuses to serve.
 */
export class PrefixInUseError extends Error {
  override readonly name = 'PrefixInUseError';
  readonly code = 'prefix_in_use';
  /** The other daemon's id, when it answered. */
  readonly otherDaemon: string | null;

  constructor(message: string, otherDaemon: string | null) {
    super(message);
    this.otherDaemon = otherDaemon;
  }
}

/**
 * Asks the subjects' `runtime.status` whether a daemon already answers there (before this one subscribes anything):
 * nobody subscribed (`no_responders`, answered at once) resolves; a daemon answering, or something subscribed that
 * does not answer within `timeoutMs`, rejects with `PrefixInUseError` naming it and the two ways out. A question that
 * cannot be asked is told to `onUnknown` and resolves.
 */
export async function checkPrefixFree(transport: Transport, subjects: Subjects, timeoutMs: number, onUnknown: (err: unknown) => void): Promise<void> {
  const fixes = `start every daemon with --cluster to share sessions between them, or give this one its own --prefix`;
  let other: string | null = null;
  let cluster = false;
  try {
    const reply = await transport.request(subjects.runtimeStatus, encodeReply({}, 'json'), { headers: contentTypeHeaders('json'), timeoutMs });
    const value = decodeReply(reply.data, 'json') as { daemon_id?: unknown; cluster?: unknown } | null;
    other = typeof value?.daemon_id === 'string' ? value.daemon_id : null;
    cluster = value?.cluster !== undefined;
  } catch (err) {
    if (err instanceof TransportError && err.code === 'no_responders') return;
    if (!(err instanceof TransportError && err.code === 'timeout')) {
      // The question could not be asked (a permission, a closed connection): the daemon starts, and says so.
      onUnknown(err);
      return;
    }
    throw new PrefixInUseError(`something subscribes to ${subjects.runtimeStatus} on this NATS but did not answer within ${timeoutMs} ms (a stopped daemon?); two daemons without --cluster must not serve one prefix: ${fixes}`, null);
  }
  const who = other !== null ? `daemon ${other}` : 'another daemon';
  const mode = cluster ? ' in cluster mode' : '';
  throw new PrefixInUseError(
    `${who} already serves prefix ${subjects.prefix}${mode} on this NATS; two daemons without --cluster on one prefix would split sessions between their data directories: ${fixes}`,
    other,
  );
}
