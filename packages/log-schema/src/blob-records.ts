import { z } from 'zod';
import type { AppendOf, RecordOf, StoredOf } from './record-stream.ts';

/**
 * Not a stream of the event log: the contents of the memory files a commit names, carried in a session's replicated
 * log next to the commit's intent so that a later owner can store and materialise them. Each record is one file's
 * bytes and their content hash.
 */
export const BLOBS_STREAM = 'memory/blobs';

/** The one record type of the blob stream. */
export const BLOB_RECORDS = {
  blob: z.object({ hash: z.string().min(1), data: z.instanceof(Uint8Array) }),
} as const;

export type BlobRecordSchemas = typeof BLOB_RECORDS;
export type BlobRecord = RecordOf<BlobRecordSchemas>;
export type BlobAppend = AppendOf<BlobRecordSchemas>;
export type StoredBlobRecord = StoredOf<BlobRecordSchemas>;
