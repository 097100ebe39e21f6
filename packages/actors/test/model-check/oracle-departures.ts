/**
 * Where the session machine departs on purpose from the reducer it replaced (`oracle/`, frozen before these were
 * built), so the equivalence checks stop there instead of reporting them:
 * - the agent's own compaction without a usable checkpoint is answered at once (the reducer started or awaited a writer);
 * - after writers failed in a row, a rebuild asks for a writer only every so many rebuilds (the reducer always did);
 * - a rebuild that says its boundary lags behind has a writer catch up to it with the next append (`catchUp`);
 * - the provider's refusal of a request teaches the calibration (`providerRefused`; no such field then either).
 * Each behaviour has its own scenario tests and model-check invariants.
 */
import { hasUsableCheckpoint } from '../../src/session-rebuild.ts';
import type { SessionContext } from '../../src/session-context.ts';
import type { SessionEvent } from '../../src/session-events.ts';
import { catchUpDue } from '../../src/session-slot.ts';
import { canStartWriter, writerDueAfterFailures } from '../../src/writer-request.ts';

/** Why folding `event` on `ctx` departs from the frozen reducer, or null when it does not. */
export function departsFromOracle(ctx: SessionContext, event: SessionEvent): string | null {
  if (event.type === 'messages.appended' && catchUpDue(ctx)) return 'catch-up writer';
  if (event.type !== 'rebuild.requested' || ctx.rebuild !== null) return null;
  if (event.providerRefused !== undefined) return "the provider's refusal";
  const switchesOn = ctx.input.checkpointEnabled && !ctx.input.memoryWriteDisabled;
  if (!switchesOn || hasUsableCheckpoint(ctx, event)) return null;
  if (event.reason === 'compaction') return 'compaction answered at once';
  if (ctx.writer === null && canStartWriter(ctx) && !writerDueAfterFailures(ctx, ctx.rebuildsSinceFailure + 1)) return 'writers backed off';
  return null;
}
