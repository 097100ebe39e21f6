/**
 * Typed errors of the memory store. Every failure carries a stable `code` so callers (the writer's tool
 * executor, the runtime) branch on data rather than on message text, and `toJSON()` gives the plain
 * `{ code, message, details }` form errors take when they cross a worker thread or the wire.
 */

/** Stable error codes; new codes may be added, existing ones never change meaning. */
export type MemoryStoreErrorCode =
  /** A project or session id does not match `[A-Za-z0-9_-]{1,128}`. */
  | 'invalid_id'
  /** A file operation targets a path the caller may not touch (sandbox rule). */
  | 'path_refused'
  /** The file to read or edit does not exist. */
  | 'not_found'
  /** The target exists but is not a regular file (a directory, for instance). */
  | 'not_a_file'
  /** `edit` found its old string zero times, or more than once without `replaceAll`. */
  | 'edit_mismatch'
  /** An argument is malformed (negative offset, empty old string, …). */
  | 'invalid_argument'
  /** `loadPrompt` / `renderPrompt` was asked for a prompt that is not registered. */
  | 'unknown_prompt'
  /** `renderPrompt` was not given a value for a placeholder the prompt uses. */
  | 'missing_prompt_var'
  /** A configuration value is refused at start-up (budgets whose sections sum above the total, unknown keys, …). */
  | 'invalid_config';

/** Plain-data form of a {@link MemoryStoreError}. */
export interface MemoryStoreErrorData {
  readonly code: MemoryStoreErrorCode;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * The one error class of `@baton/memory-store`. All of its failures are terminal for the operation that raised
 * them: retrying the same call with the same arguments fails the same way.
 */
export class MemoryStoreError extends Error {
  override readonly name = 'MemoryStoreError';
  readonly code: MemoryStoreErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: MemoryStoreErrorCode,
    message: string,
    details: Readonly<Record<string, unknown>> = {},
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  /** The `{ code, message, details }` form used across threads and on the wire. */
  toJSON(): MemoryStoreErrorData {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** The `code` of a Node.js system error (`ENOENT`, `EEXIST`, …), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = error.code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
