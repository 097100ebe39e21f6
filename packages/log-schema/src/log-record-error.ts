/** A stored record that does not match the schema of its stream: a bug, or a log written by an incompatible version. */
export class LogRecordError extends Error {
  override readonly name = 'LogRecordError';
  readonly code = 'malformed_record';
  readonly stream: string;
  readonly seq: number;
  readonly type: string;
  /** The failing paths inside the payload, as `path: message`. */
  readonly issues: readonly string[];

  constructor(stream: string, seq: number, type: string, issues: readonly string[]) {
    super(`malformed record ${stream}#${seq} (${type}): ${issues.slice(0, 3).join('; ') || 'unknown record type'}`);
    this.stream = stream;
    this.seq = seq;
    this.type = type;
    this.issues = issues;
  }
}
