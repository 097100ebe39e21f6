/** Names of the streams Baton writes, one place for every reader and writer of the log. */

const SESSION_PREFIX = 'session/';
const WRITER_PREFIX = 'writer/';

/** The stream of one session: `session.opened`, then every input of its actor and the decisions it took. */
export function sessionStream(sessionId: string): string {
  return `${SESSION_PREFIX}${sessionId}`;
}

/** The stream of one writer run: `writer.started`, then every event its actor consumed. */
export function writerStream(writerId: string): string {
  return `${WRITER_PREFIX}${writerId}`;
}

/** The journal of every memory-file commit (intent and completion), shared by all sessions. */
export const COMMITS_STREAM = 'memory/commits';

/** The daemon's index of handoff tokens by digest (`handoff-records.ts`). */
export const HANDOFF_INDEX_STREAM = 'handoff/tokens';

/** What a stream name says about its records, or null for a stream Baton does not write. */
export type StreamKind =
  | { readonly kind: 'session'; readonly sessionId: string }
  | { readonly kind: 'writer'; readonly writerId: string }
  | { readonly kind: 'commits' }
  | { readonly kind: 'handoffs' };

export function parseStream(stream: string): StreamKind | null {
  if (stream.startsWith(SESSION_PREFIX)) return { kind: 'session', sessionId: stream.slice(SESSION_PREFIX.length) };
  if (stream.startsWith(WRITER_PREFIX)) return { kind: 'writer', writerId: stream.slice(WRITER_PREFIX.length) };
  if (stream === COMMITS_STREAM) return { kind: 'commits' };
  if (stream === HANDOFF_INDEX_STREAM) return { kind: 'handoffs' };
  return null;
}

/** The session a writer id belongs to (writer ids are `<sid>-w<n>`), or null for an id of another form. */
export function sessionOfWriter(writerId: string): string | null {
  const match = /^(.+)-w[1-9][0-9]*$/.exec(writerId);
  return match?.[1] ?? null;
}

/** Prefix of every writer stream of one session (writer ids are `<sid>-w<n>`). */
export function sessionWritersPrefix(sessionId: string): string {
  return `${WRITER_PREFIX}${sessionId}-w`;
}

/** Prefix of every session stream. */
export const SESSION_STREAMS_PREFIX = SESSION_PREFIX;
