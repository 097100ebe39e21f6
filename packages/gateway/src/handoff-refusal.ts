import type { BatonRequestError } from '@baton/client';
import { HandoffRefusalSchema, type HandoffRefusal } from '@baton/protocol';

/** Why the daemon refused a handoff token (`details.reason` of its `forbidden`), or null for any other refusal. */
export function handoffRefusalOf(err: BatonRequestError): HandoffRefusal | null {
  const reason = (err.details as { reason?: unknown } | null | undefined)?.reason;
  const parsed = HandoffRefusalSchema.safeParse(reason);
  return parsed.success ? parsed.data : null;
}
