import { z } from 'zod';
import { SESSION_ID_PATTERN } from './subjects.ts';

/** A session id (`[A-Za-z0-9_-]{1,128}`). */
export const SessionIdSchema = z.string().regex(SESSION_ID_PATTERN, 'session id must match [A-Za-z0-9_-]{1,128}');

/**
 * Who a session belongs to: a keyed digest (HMAC-SHA256 under a secret only the gateway's operator holds) of the
 * credential that opened it. Never the credential, and not reversible without the secret.
 */
export const OwnerDigestSchema = z.string().regex(/^hmac-sha256:[A-Za-z0-9_-]{43}$/, 'owner must be hmac-sha256:<43 base64url characters>');

/** How a session continues another: a handoff to another agent, a new slice of a gateway session key, a resume. */
export const LineageKindSchema = z.enum(['handoff', 'slice', 'resume']);
export type LineageKind = z.infer<typeof LineageKindSchema>;

/**
 * Where a session came from, as its opening records it and `runtime.sessions` shows it: the session it continues,
 * how, the committed checkpoint version of that session it started from and the message id that checkpoint covers up
 * to (null: that session had none).
 */
export const LineageSchema = z.strictObject({
  from_session: SessionIdSchema,
  kind: LineageKindSchema,
  checkpoint_version: z.int().nonnegative().nullable(),
  watermark: z.string().nullable(),
});
export type Lineage = z.infer<typeof LineageSchema>;
/** A handoff token: `bh_` and 32 random bytes in base64url (43 characters). Only its SHA-256 digest is ever stored. */
export const HANDOFF_TOKEN_PATTERN = /^bh_[A-Za-z0-9_-]{43}$/;
export const HandoffTokenSchema = z.string().regex(HANDOFF_TOKEN_PATTERN, 'handoff token must be bh_ and 43 base64url characters');

/** A non-empty string (ids, names). */
export const NonEmptyStringSchema = z.string().min(1);

/** A safe integer ≥ 0 (token counts, durations, counters). */
export const CountSchema = z.int().nonnegative();

/** A safe integer ≥ 1 (window sizes, limits). */
export const PositiveIntSchema = z.int().positive();

/** Integer milliseconds since the epoch (every time on the wire). */
export const EpochMsSchema = z.int().nonnegative();

/** Any object, every key kept as sent (OpenAI content parts, tool calls, tool definitions). */
export const OpenObjectSchema = z.looseObject({});

/**
 * Validates `value` with `schema` but returns the caller's own object, not zod's copy.
 *
 * Why: zod rebuilds objects with the schema's keys first, so a parsed message would come out with its keys
 * reordered. Fork mode must hand the model exactly what the agent sent, so message objects are validated but never
 * rebuilt. Only use this for schemas without transforms or defaults (the output then equals the input).
 */
export function verbatim<S extends z.ZodType>(schema: S): z.ZodType<z.output<S>, z.input<S>> {
  return z.custom<z.output<S>>().check((ctx) => {
    const result = schema.safeParse(ctx.value);
    if (result.success) return;
    for (const issue of result.error.issues) {
      ctx.issues.push({ ...issue, input: issue.input ?? ctx.value } as (typeof ctx.issues)[number]);
    }
  }) as unknown as z.ZodType<z.output<S>, z.input<S>>;
}
