// No schema library here: the CLI validates its --prefix and session arguments with this module alone
// (`@baton/protocol/subjects`), so parsing a command line does not load zod.

/** Session ids as PROTOCOL.md fixes them: they become one NATS subject token, so no dots, spaces or wildcards. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Default subject prefix. */
export const DEFAULT_PREFIX = 'baton';

/** Queue group the daemons serve `open` in, so exactly one daemon opens each session. */
export const OPEN_QUEUE_GROUP = 'baton';

/** Session request verbs, i.e. the last token of `<prefix>.v1.session.<sid>.<verb>` for requests. */
export const SESSION_VERBS = ['append', 'tasks', 'checkpoint', 'rebuild', 'status', 'close'] as const;
export type SessionVerb = (typeof SESSION_VERBS)[number];

/** The subjects of protocol v1 under one prefix. */
export interface Subjects {
  readonly prefix: string;
  readonly open: string;
  readonly runtimeStatus: string;
  readonly runtimeDrain: string;
  /** `<prefix>.v1.runtime.sessions`: each daemon lists its own sessions (no queue group). Additive to v1. */
  readonly runtimeSessions: string;
  append(sessionId: string): string;
  tasks(sessionId: string): string;
  checkpoint(sessionId: string): string;
  rebuild(sessionId: string): string;
  status(sessionId: string): string;
  close(sessionId: string): string;
  /** Where Baton publishes the session's events. */
  events(sessionId: string): string;
  /** Matches every session subject, requests and events alike: `<prefix>.v1.session.*.*`. */
  readonly sessionWildcard: string;
}

const PREFIX_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Builds the subjects of protocol v1. Throws a `TypeError` when `prefix` is not one or more dot-separated tokens of
 * `[A-Za-z0-9_-]`, or when a session id does not match {@link SESSION_ID_PATTERN} (it would not be one subject token).
 */
export function subjects(prefix: string = DEFAULT_PREFIX): Subjects {
  if (!PREFIX_PATTERN.test(prefix)) throw new TypeError(`invalid subject prefix: ${JSON.stringify(prefix)}`);
  const base = `${prefix}.v1`;
  const session = (verb: SessionVerb | 'events') => (sessionId: string): string => {
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new TypeError(`invalid session id: ${JSON.stringify(sessionId)}`);
    return `${base}.session.${sessionId}.${verb}`;
  };
  return {
    prefix,
    open: `${base}.open`,
    runtimeStatus: `${base}.runtime.status`,
    runtimeDrain: `${base}.runtime.drain`,
    runtimeSessions: `${base}.runtime.sessions`,
    append: session('append'),
    tasks: session('tasks'),
    checkpoint: session('checkpoint'),
    rebuild: session('rebuild'),
    status: session('status'),
    close: session('close'),
    events: session('events'),
    sessionWildcard: `${base}.session.*.*`,
  };
}

/** A session request subject, taken apart. */
export interface SessionSubject {
  readonly sessionId: string;
  readonly verb: SessionVerb;
}

/**
 * Parses `<prefix>.v1.session.<sid>.<verb>` for the request verbs. Returns `null` for anything else: another prefix,
 * an unknown verb, an invalid session id, and the `events` subject — so a daemon subscribed to
 * `sessionWildcard` skips its own events. A daemon should answer a `null` subject that carries a reply subject with
 * `bad_request` rather than let the caller time out.
 */
export function parseSessionSubject(subject: string, prefix: string = DEFAULT_PREFIX): SessionSubject | null {
  const head = `${prefix}.v1.session.`;
  if (!subject.startsWith(head)) return null;
  const rest = subject.slice(head.length);
  const dot = rest.indexOf('.');
  if (dot < 0) return null;
  const sessionId = rest.slice(0, dot);
  const verb = rest.slice(dot + 1);
  if (!SESSION_ID_PATTERN.test(sessionId) || !isSessionVerb(verb)) return null;
  return { sessionId, verb };
}

function isSessionVerb(verb: string): verb is SessionVerb {
  return (SESSION_VERBS as readonly string[]).includes(verb);
}
