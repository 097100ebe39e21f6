/**
 * The exit codes of every `baton` command. A command's own table (`RUNTIME_EXIT`, `MEMORY_EXIT`, …) names the cases
 * it has, with these values.
 */
export const EXIT = {
  /** Done (or, for a server, stopped by SIGTERM/SIGINT). */
  ok: 0,
  /**
   * Failed or refused: a bad flag, configuration file or environment variable; a request the daemon refused; a replay
   * that diverges; a data directory or port another process holds; a server that stops on a fatal error.
   */
  failed: 1,
  /**
   * What the command needs is not there: no NATS server at the URL (or it refuses the connection), no daemon or
   * cluster answering on the prefix, an unknown session, scope or version, no event log in the data directory.
   */
  notFound: 2,
  /** The daemon answered but does not serve yet (`baton status`). */
  notServing: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
