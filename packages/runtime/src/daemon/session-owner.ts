import { OWNER_KEY, ownerSetBy, sessionStream, type EventLog } from '@baton/log-schema';

/**
 * The owner digest session `sessionId` is bound to: the one the record that last registered the owner key set (its
 * opening, or a later `session.bound`); null for a session opened without one (or one the log does not have). One
 * lookup and one record read, whatever the session's length.
 */
export function sessionOwner(log: EventLog, sessionId: string): string | null {
  const stream = sessionStream(sessionId);
  const seq = log.keySeq(stream, OWNER_KEY);
  if (seq === undefined) return null;
  const [record] = [...log.read(stream, { from: seq, to: seq })];
  return record === undefined ? null : (ownerSetBy(record) ?? null);
}

/**
 * The owner whose binding holds: `sessionOwner`, once the session recorded a message (the first `messages.appended`
 * is near the start of the stream, so this reads a few records). Before that the session holds nothing to protect and
 * belongs to nobody yet: a first call the provider refused (a mistyped key) claims nothing that lasts.
 */
export function bindingOwner(log: EventLog, sessionId: string): string | null {
  const owner = sessionOwner(log, sessionId);
  if (owner === null) return null;
  for (const record of log.read(sessionStream(sessionId))) if (record.type === 'messages.appended') return owner;
  return null;
}

/**
 * Binds session `sessionId` to `owner` (a `session.bound` record registering the owner key). The caller serialises
 * appends to the session's stream (the daemon's mailbox; `baton rebind` only runs while no daemon holds the log).
 */
export async function bindSessionOwner(log: EventLog, sessionId: string, owner: string, at: number): Promise<void> {
  await log.append(sessionStream(sessionId), [{ type: 'session.bound', at, payload: { owner }, keys: [OWNER_KEY] }]);
}
