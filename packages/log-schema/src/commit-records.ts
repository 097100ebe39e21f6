import { z } from 'zod';
import type { AppendOf, RecordOf, StoredOf } from './record-stream.ts';

/**
 * Why a commit was made: a writer's run, restoring an earlier version, or a new session starting from the checkpoint
 * of the session it continues (its lineage).
 */
export const CommitReasonSchema = z.enum(['writer', 'restore', 'inherited']);
export type CommitReason = z.infer<typeof CommitReasonSchema>;

/** One memory-file commit: the files it replaced (relative to the memory root) and their content hashes. */
export const CommitRecordSchema = z.object({
  commitId: z.string(),
  /** Null for a commit no writer made (a restore, an inherited checkpoint). */
  writerId: z.string().nullable(),
  reason: CommitReasonSchema,
  at: z.number().int().nonnegative(),
  files: z.array(z.object({ rel: z.string(), hash: z.string() })),
});

/** Every record type of the `memory/commits` stream: the intent of a commit, then its completion. */
export const COMMIT_RECORDS = {
  'commit.prepared': CommitRecordSchema,
  'commit.applied': CommitRecordSchema,
} as const;

export type CommitRecordSchemas = typeof COMMIT_RECORDS;
export type CommitLogRecord = RecordOf<CommitRecordSchemas>;
export type CommitAppend = AppendOf<CommitRecordSchemas>;
export type StoredCommitRecord = StoredOf<CommitRecordSchemas>;
