/**
 * TEST ORACLE, not production code: the session context as the frozen reducer (`session-plan.ts`,
 * `session-rebuild.ts`, `writer-request.ts`) keeps it, with the per-message index as one array. The machine keeps the
 * index as an `IndexList`; `reducer-equivalence.test.ts` compares the two after flattening the machine's index
 * (`oracleContext`). Types only: the oracle's logic is unchanged.
 */
import type { MessageIndexEntry } from '../../../src/boundary.ts';
import { indexEntries } from '../../../src/index-list.ts';
import type { SessionContext as MachineContext } from '../../../src/session-context.ts';

export type SessionContext = Omit<MachineContext, 'index'> & { readonly index: readonly MessageIndexEntry[] };

/** The machine's context in the oracle's shape: the index flattened to its entries, every key in the same place. */
export function oracleContext(ctx: MachineContext): SessionContext {
  return { ...ctx, index: indexEntries(ctx.index) };
}
