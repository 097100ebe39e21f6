import type { Transport } from '@baton/client';
import type { EventLog } from '@baton/log-schema';
import { OPEN_QUEUE_GROUP, OpenReplySchema, OpenRequestSchema, parseRequest, projectOfSubject, type RuntimeCluster, type SessionVerb, type Subjects } from '@baton/protocol';
import type { SharedFilesPort } from '../memory/shared-files-port.ts';
import type { DaemonLogger } from './daemon-options.ts';
import { checkPrefixFree } from './prefix-in-use.ts';
import type { RequestDispatch } from './request-dispatch.ts';
import type { NotServing, Router } from './router.ts';
import type { SessionService } from './session-service.ts';

/** How long a daemon without cluster mode waits for another daemon on its subjects to answer before refusing. */
const PREFIX_CHECK_MS = 2_000;

export interface LocalRouterOptions {
  readonly log: EventLog;
  readonly transport: Transport;
  readonly subjects: Subjects;
  /** Whether the unscoped subjects are served too (not only a project's). */
  readonly unscoped: boolean;
  readonly sessions: () => SessionService;
  readonly logger: DaemonLogger;
}

/**
 * A daemon alone on its subjects: every session is its own, served through the queue group on the wildcard session
 * subjects. It must be alone: start-up refuses (`PrefixInUseError`) when another daemon already answers there.
 */
export class LocalRouter implements Router {
  readonly #o: LocalRouterOptions;
  readonly appendLog: EventLog;
  readonly sharesProjectFiles = false;
  readonly holds = (): boolean => true;

  constructor(options: LocalRouterOptions) {
    this.#o = options;
    this.appendLog = options.log;
  }

  sharedFiles(): SharedFilesPort | null {
    return null;
  }

  /**
   * Asks before anything is subscribed whether another daemon serves these subjects (a request is published at
   * once, so this daemon's own subscriptions do not hear it).
   */
  start(): Promise<void> {
    const unknown = (err: unknown): void => this.#o.logger('warn', 'could not ask whether another daemon serves this prefix', { error: String(err) });
    return checkPrefixFree(this.#o.transport, this.#o.subjects, PREFIX_CHECK_MS, unknown);
  }

  subscribe(requests: RequestDispatch): void {
    const s = this.#o.subjects;
    const sessions = this.#o.sessions;
    if (this.#o.unscoped) {
      requests.serve(s.open, OpenRequestSchema, OpenReplySchema, (body, _sid, enc) => sessions().open(body, enc), { queue: OPEN_QUEUE_GROUP });
      for (const [name, dispatch] of requests.verbs) requests.listen(`${s.prefix}.v1.session.*.${name}`, dispatch, OPEN_QUEUE_GROUP);
    }
    requests.listen(s.scopedOpenWildcard, (msg) => {
      const scope = projectOfSubject(msg.subject, s.prefix);
      void requests.handle(msg, (value, _sid, enc) => sessions().open(parseRequest(OpenRequestSchema, value), enc, undefined, scope ?? ''), null);
    }, OPEN_QUEUE_GROUP);
    for (const [name, dispatch] of requests.scopedVerbs) requests.listen(s.scopedVerbWildcard(name as SessionVerb), dispatch, OPEN_QUEUE_GROUP);
  }

  async sessionCall<T>(_sessionId: string | null, call: () => Promise<T>): Promise<T> {
    return await call();
  }

  clusterStatus(): RuntimeCluster | null {
    return null;
  }

  notServing(): NotServing | null {
    return null;
  }

  joinFailing(): boolean {
    return false;
  }

  stopOpens(): void {}

  async handOff(): Promise<void> {}

  async stop(): Promise<void> {}
}
