/** Replay of a session's event log: a readable timeline and the determinism check behind `baton replay --verify`. */
export { readTimeline, type SessionTimeline, type TimelineEntry } from './read-timeline.ts';
export { verifySession, type VerifyResult } from './verify-session.ts';
export { refoldWriter, writerEventOf, type WriterRefold, type SettleEffect } from './refold-writer.ts';
export { ReplayError, type ReplayErrorCode } from './replay-error.ts';
export { firstDifference, plainEqual } from './plain-diff.ts';
export type { Divergence } from './divergence.ts';
