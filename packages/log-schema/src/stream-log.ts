import type { AppendResult, EventLog, ReadOptions } from './event-log.ts';
import { checkRecord, toAppendInputs, type AppendOf, type PayloadSchemas, type StoredOf } from './record-stream.ts';

/**
 * A typed view of one family of streams (all session streams, all writer streams, the commit journal): appends take
 * only the record types the family defines, with their payloads; reads check every record against its schema and
 * throw `LogRecordError` for one that does not match.
 */
export class StreamLog<S extends PayloadSchemas> {
  readonly log: EventLog;
  readonly schemas: S;
  readonly #streamOf: (id: string) => string;

  constructor(log: EventLog, schemas: S, streamOf: (id: string) => string) {
    this.log = log;
    this.schemas = schemas;
    this.#streamOf = streamOf;
  }

  stream(id: string): string {
    return this.#streamOf(id);
  }

  /** Appends records in order; resolves once they are durable (see `EventLog.append`). */
  append(id: string, records: readonly AppendOf<S>[]): Promise<AppendResult[]> {
    return this.log.append(this.#streamOf(id), toAppendInputs(records));
  }

  /**
   * Reads a stream range, each record checked against its type's schema. With `include`, records of other types are
   * passed over unchecked (a reader that does not use them neither pays for nor fails on them).
   */
  *read(id: string, options?: ReadOptions, include?: (type: string) => boolean): Generator<StoredOf<S>> {
    for (const record of this.log.read(this.#streamOf(id), options)) {
      if (include === undefined || include(record.type)) yield checkRecord(this.schemas, record);
    }
  }

  lastSeq(id: string): number {
    return this.log.lastSeq(this.#streamOf(id));
  }
}
