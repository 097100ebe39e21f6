/**
 * TEST ORACLE, not production code: the session context as the frozen reducer (`session-plan.ts`,
 * `session-rebuild.ts`, `writer-request.ts`) keeps it, with the per-message index as one array. The machine keeps the
 * index as an `IndexList`; `reducer-equivalence.test.ts` compares the two after flattening the machine's index
 * (`oracleContext`), leaving out the fields the reducer predates. Types only: the oracle's logic is unchanged.
 */
import type { MessageIndexEntry } from '../../../src/boundary.ts';
import { indexEntries } from '../../../src/index-list.ts';
import type { SessionContext as MachineContext } from '../../../src/session-context.ts';

/**
 * Fields the machine's context gained after the reducer was frozen (the calibration and its counts, what the provider
 * reported, the writers' backoff). The frozen reducer neither reads nor keeps them: both sides are compared without
 * them, and they have tests of their own.
 */
export const NEWER_FIELDS = ['calibration', 'counts', 'lastObservation', 'lastPromptTokens', 'overWindow', 'failedWriters', 'rebuildsSinceFailure', 'catchUp'] as const;

export type SessionContext = Omit<MachineContext, 'index' | (typeof NEWER_FIELDS)[number]> & { readonly index: readonly MessageIndexEntry[] };

/** The machine's context in the oracle's shape: the index flattened to its entries, every other key in the same place. */
export function oracleContext(ctx: MachineContext): SessionContext {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(ctx)) if (!(NEWER_FIELDS as readonly string[]).includes(key)) out[key] = key === 'index' ? indexEntries(ctx.index) : value;
  return out as unknown as SessionContext;
}
