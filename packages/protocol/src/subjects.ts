// No schema library here: the CLI validates its --prefix and session arguments with this module alone
// (`@baton/protocol/subjects`), so parsing a command line does not load zod.

/** Session ids as docs/protocol.md fixes them: they become one NATS subject token, so no dots, spaces or wildcards. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Default subject prefix. */
export const DEFAULT_PREFIX = 'baton';

/** Queue group the daemons serve `open` in, so exactly one daemon opens each session. */
export const OPEN_QUEUE_GROUP = 'baton';

/** Session request verbs, i.e. the last token of `<prefix>.v1.session.<sid>.<verb>` for requests. */
export const SESSION_VERBS = ['append', 'part', 'tasks', 'checkpoint', 'rebuild', 'status', 'close', 'handoff'] as const;
export type SessionVerb = (typeof SESSION_VERBS)[number];

/**
 * Project ids that can scope subjects: one NATS subject token, like a session id. A project whose id is not one (a
 * path, a name with dots) is reachable on the unscoped subjects only.
 */
export const PROJECT_TOKEN_PATTERN = SESSION_ID_PATTERN;

/** Whether `projectId` can be the project token of scoped subjects. */
export function isScopableProject(projectId: string): boolean {
  return PROJECT_TOKEN_PATTERN.test(projectId);
}

/** A session's request subjects and its events subject, under the unscoped or a project's head. */
export interface SessionSubjects {
  readonly open: string;
  append(sessionId: string): string;
  /** `append` too large for one message, in parts (additive to v1). */
  part(sessionId: string): string;
  tasks(sessionId: string): string;
  checkpoint(sessionId: string): string;
  rebuild(sessionId: string): string;
  status(sessionId: string): string;
  close(sessionId: string): string;
  /** Grants a one-time token that continues the session in a new one (additive to v1). */
  handoff(sessionId: string): string;
  /** Where Baton publishes the session's events. */
  events(sessionId: string): string;
}

/**
 * The subjects of one project: `<prefix>.v1.p.<project>.open`, `….sessions` (that project's sessions only) and
 * `….session.<sid>.<verb>` / `….session.<sid>.events`. A daemon serves a request on them only for a session of that
 * project, so a NATS permission on `<prefix>.v1.p.<project>.>` grants that project and nothing else.
 */
export interface ProjectSubjects extends SessionSubjects {
  readonly projectId: string;
  readonly sessions: string;
  /** Everything of the project, requests and events: `<prefix>.v1.p.<project>.>`. */
  readonly all: string;
}

/** The subjects of protocol v1 under one prefix. */
export interface Subjects extends SessionSubjects {
  readonly prefix: string;
  readonly runtimeStatus: string;
  readonly runtimeDrain: string;
  /** `<prefix>.v1.runtime.sessions`: each daemon lists its own sessions (no queue group). Additive to v1. */
  readonly runtimeSessions: string;
  /** Matches every session subject, requests and events alike: `<prefix>.v1.session.*.*`. */
  readonly sessionWildcard: string;
  /** The subjects of one project. Throws a `TypeError` when `projectId` is not one subject token. */
  project(projectId: string): ProjectSubjects;
  /** Every project's `open`: `<prefix>.v1.p.*.open`. */
  readonly scopedOpenWildcard: string;
  /** Every project's `sessions`: `<prefix>.v1.p.*.sessions`. */
  readonly scopedSessionsWildcard: string;
  /** Every project's requests of one verb: `<prefix>.v1.p.*.session.*.<verb>`. */
  scopedVerbWildcard(verb: SessionVerb): string;
}

const PREFIX_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Builds the subjects of protocol v1. Throws a `TypeError` when `prefix` is not one or more dot-separated tokens of
 * `[A-Za-z0-9_-]`, or when a session id does not match {@link SESSION_ID_PATTERN} (it would not be one subject token).
 */
export function subjects(prefix: string = DEFAULT_PREFIX): Subjects {
  if (!PREFIX_PATTERN.test(prefix)) throw new TypeError(`invalid subject prefix: ${JSON.stringify(prefix)}`);
  const base = `${prefix}.v1`;
  const sessionOf = (head: string) => (verb: SessionVerb | 'events') => (sessionId: string): string => {
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new TypeError(`invalid session id: ${JSON.stringify(sessionId)}`);
    return `${head}.session.${sessionId}.${verb}`;
  };
  const session = sessionOf(base);
  const project = (projectId: string): ProjectSubjects => {
    if (!isScopableProject(projectId)) throw new TypeError(`invalid project id for scoped subjects: ${JSON.stringify(projectId)}`);
    const head = `${base}.p.${projectId}`;
    const scoped = sessionOf(head);
    return {
      projectId,
      open: `${head}.open`,
      sessions: `${head}.sessions`,
      append: scoped('append'),
      part: scoped('part'),
      tasks: scoped('tasks'),
      checkpoint: scoped('checkpoint'),
      rebuild: scoped('rebuild'),
      status: scoped('status'),
      close: scoped('close'),
      handoff: scoped('handoff'),
      events: scoped('events'),
      all: `${head}.>`,
    };
  };
  return {
    prefix,
    open: `${base}.open`,
    runtimeStatus: `${base}.runtime.status`,
    runtimeDrain: `${base}.runtime.drain`,
    runtimeSessions: `${base}.runtime.sessions`,
    append: session('append'),
    part: session('part'),
    tasks: session('tasks'),
    checkpoint: session('checkpoint'),
    rebuild: session('rebuild'),
    status: session('status'),
    close: session('close'),
    handoff: session('handoff'),
    events: session('events'),
    sessionWildcard: `${base}.session.*.*`,
    project,
    scopedOpenWildcard: `${base}.p.*.open`,
    scopedSessionsWildcard: `${base}.p.*.sessions`,
    scopedVerbWildcard: (verb) => `${base}.p.*.session.*.${verb}`,
  };
}

/**
 * The project of a scoped subject (`<prefix>.v1.p.<project>.…`), or `null` for any other subject. The token is
 * checked as a project id, so what comes back can be compared with a session's project as it is.
 */
export function projectOfSubject(subject: string, prefix: string = DEFAULT_PREFIX): string | null {
  const head = `${prefix}.v1.p.`;
  if (!subject.startsWith(head)) return null;
  const rest = subject.slice(head.length);
  const dot = rest.indexOf('.');
  const projectId = dot < 0 ? rest : rest.slice(0, dot);
  return isScopableProject(projectId) ? projectId : null;
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
