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

/**
 * The exit-code line of a command's `--help`: what each code it has means for it, the numbers taken from `EXIT`
 * (`Exit codes: 0 ok; 1 divergence; 2 unknown session or no event log.`).
 */
export function exitCodesHelp(meanings: Partial<Record<keyof typeof EXIT, string>>): string {
  const codes = (Object.keys(EXIT) as (keyof typeof EXIT)[]).filter((k) => meanings[k] !== undefined).map((k) => `${EXIT[k]} ${meanings[k]}`);
  return `\nExit codes: ${codes.join('; ')}.`;
}
