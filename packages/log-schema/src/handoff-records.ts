import { SessionIdSchema } from '@baton/protocol';
import { z } from 'zod';
import type { AppendOf, RecordOf, StoredOf } from './record-stream.ts';
import { HANDOFF_INDEX_STREAM } from './streams.ts';

/**
 * The daemon's index of handoff tokens: a token names no session, so each grant is also indexed here by the token's
 * digest (lookup key `tokenKey(digest)`), pointing at the session it was granted on, whose stream holds the grant
 * itself (`session.handoff_granted`). Kept in the event log, so it survives restarts with nothing to rebuild.
 */
export const HANDOFFS_STREAM = HANDOFF_INDEX_STREAM;

export const HANDOFF_RECORDS = {
  'handoff.indexed': z.object({ token_digest: z.string(), session_id: SessionIdSchema }),
} as const;

/** The lookup key of a token's index record. */
export function tokenKey(tokenDigest: string): string {
  return `t:${tokenDigest}`;
}

export type HandoffRecordSchemas = typeof HANDOFF_RECORDS;
export type HandoffRecord = RecordOf<HandoffRecordSchemas>;
export type HandoffAppend = AppendOf<HandoffRecordSchemas>;
export type StoredHandoffRecord = StoredOf<HandoffRecordSchemas>;
