import { z } from 'zod';

/**
 * Error codes of protocol v1. `bad_request`: schema violation (`details` lists the failing paths); `decode_error`:
 * not valid MessagePack/JSON; `not_found`: unknown session; `conflict`; `forbidden`: the session belongs to
 * another owner; `too_large`: over the server's max payload;
 * `unavailable`: the daemon is draining, stopping or still starting; `quarantined`: the session's log holds a record
 * the daemon cannot fold (a bug or a damaged log), so the session is set aside while every other session keeps
 * serving (`details` names the record); `internal`: a bug or an unexpected failure.
 */
export const ERROR_CODES = [
  'bad_request',
  'decode_error',
  'not_found',
  'conflict',
  'forbidden',
  'too_large',
  'unavailable',
  'quarantined',
  'internal',
] as const;
export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/** One failing path of a `bad_request` (`path` joins keys and indexes with dots, `""` is the body itself). */
export const IssueDetailSchema = z.object({ path: z.string(), message: z.string() });
export type IssueDetail = z.infer<typeof IssueDetailSchema>;

/** `{ ok: false, error: { code, message, details? } }`, the reply to any request that failed. */
export const ErrorReplySchema = z.object({
  ok: z.literal(false),
  error: z.object({
    code: ErrorCodeSchema,
    message: z.string(),
    details: z.unknown().optional(),
  }),
});
export type ErrorReply = z.infer<typeof ErrorReplySchema>;
