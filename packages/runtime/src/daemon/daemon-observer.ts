import { parseSessionSubject, projectOfSubject, type ErrorCode, type PublishedEventBody, type Subjects } from '@baton/protocol';

/** One request the daemon answered: what was asked, how long the answer took, and how it ended. */
export interface RequestAnswer {
  /** `open`, a session verb (`append`, `rebuild`, …), `runtime.status`, `runtime.sessions`, `runtime.drain`, or `unknown`. */
  readonly verb: string;
  /** From the request's arrival to its reply being sent. */
  readonly seconds: number;
  /** `ok`, or the error code the reply carried. */
  readonly code: 'ok' | ErrorCode;
  /** The reply body of a successful request (without `ok`); null for an error. */
  readonly body: Readonly<Record<string, unknown>> | null;
}

/**
 * Someone watching a daemon from the outside (its metrics): told of every request it answered and every session event
 * it published. Called on the main thread after the fact; it must not throw and must not wait.
 */
export interface DaemonObserver {
  requestAnswered(answer: RequestAnswer): void;
  eventPublished(event: PublishedEventBody): void;
  /**
   * A session learnt that `count` more of the requests its agent sent did not fit the model's window (the provider
   * counted more than the window, or refused them as too long). Never expected: a rebuilt request is fitted.
   */
  requestsOverWindow?(sessionId: string, count: number): void;
}

/** The verb a request subject names (see `RequestAnswer.verb`). */
export function requestVerb(s: Subjects, subject: string): string {
  // In cluster mode a session's holder also takes `open` on the session's own subject.
  if (subject === s.open || (subject.startsWith(`${s.prefix}.v1.session.`) && subject.endsWith('.open'))) return 'open';
  if (subject === s.runtimeStatus) return 'runtime.status';
  if (subject === s.runtimeSessions) return 'runtime.sessions';
  if (subject === s.runtimeDrain) return 'runtime.drain';
  const project = projectOfSubject(subject, s.prefix);
  if (project !== null) {
    // A project's subjects: the same verbs under `<prefix>.v1.p.<project>.`.
    const scoped = s.project(project);
    if (subject === scoped.open) return 'open';
    if (subject === scoped.sessions) return 'runtime.sessions';
    return parseSessionSubject(`${s.prefix}.v1.${subject.slice(`${s.prefix}.v1.p.${project}.`.length)}`, s.prefix)?.verb ?? 'unknown';
  }
  return parseSessionSubject(subject, s.prefix)?.verb ?? 'unknown';
}
