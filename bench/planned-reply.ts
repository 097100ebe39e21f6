/**
 * How the agents of the `writers-api` and `instant-compaction` sections tell the loopback upstream
 * (`api-upstream-child.ts`) what to answer: headers of the agent's own call, which the gateway forwards as they are.
 */
import type { ReplySpec } from '@baton/testing';

/** The planned reply of this call (base64url JSON of a `ReplySpec`): the tool call the model makes, or its answer. */
export const REPLY_HEADER = 'x-bench-reply';
/** Asks for a summary of the conversation (a summarisation call). */
export const SUMMARY_HEADER = 'x-bench-summary';
/** A delay (ms) before this one answer, on top of the loopback's latency. */
export const DELAY_HEADER = 'x-bench-delay-ms';

export function encodeReply(spec: ReplySpec): string {
  return Buffer.from(JSON.stringify(spec), 'utf8').toString('base64url');
}

export function decodeReply(value: string): ReplySpec {
  return JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as ReplySpec;
}
