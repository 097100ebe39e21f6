import { addCounts, countsOfMessage, observe, type ContentCounts } from './calibration.ts';
import { appendToIndex } from './index-list.ts';
import type { Failure, IndexedMessage } from './session-events.ts';
import type { RunningWriter, SessionContext } from './session-context.ts';
import type { Events, SessionStep } from './session-step.ts';
import { canStartWriter } from './writer-request.ts';

/**
 * The threshold ladder at work: appended messages update the index and the provider usage, and the rungs
 * that usage reaches fire once each. These are the guards and action bodies of the slot region's `messages.appended`
 * transitions; guards see the context before the event, so they look at it with the messages indexed.
 */

/** Rungs reached by the current usage: the ones not fired yet, or else the final rung once more at the recovery gate. */
interface Reached {
  readonly rungs: readonly number[];
  readonly viaGate: boolean;
}

const NONE: Reached = { rungs: [], viaGate: false };

/** The usage after the appended messages: the newest finished main-slice assistant message with usage sets it. */
function usageAfter(ctx: SessionContext, messages: readonly IndexedMessage[]): Pick<SessionContext, 'tokens' | 'usageRecovered'> {
  let tokens = ctx.tokens;
  let usageRecovered = ctx.usageRecovered;
  for (const m of messages) {
    if (m.main && m.role === 'assistant' && m.finished && m.usageTotal !== null) {
      tokens = m.usageTotal;
      usageRecovered = false;
    }
  }
  return { tokens, usageRecovered };
}

type IndexedFields = Pick<SessionContext, 'index' | 'tokens' | 'usageRecovered' | 'calibration' | 'counts' | 'lastObservation' | 'lastPromptTokens' | 'overWindow'>;

/**
 * The fields adding the main-slice messages changes: the index and its counts, the tokens (the newest finished
 * assistant message with usage sets them), and the calibration: each reported prompt is compared with Baton's count of
 * the request it answered — the system prompt and tools, and every message of the context before it.
 */
export function indexedFields(ctx: SessionContext, event: Events<'messages.appended'>): IndexedFields {
  const main = event.messages.filter((m) => m.main);
  const index = appendToIndex(
    ctx.index,
    main.map(({ id, role, tokens, textual, finished, toolCallIds, images }) => ({ id, role, tokens, textual, finished, toolCallIds, ...(images !== undefined && images > 0 ? { images } : {}) })),
  );
  const { tokens, usageRecovered } = usageAfter(ctx, main);
  let { calibration, counts, lastObservation, lastPromptTokens, overWindow } = ctx;
  const overhead: ContentCounts = { text: ctx.input.overheadTokens ?? 0, tool: 0, images: 0 };
  for (const m of main) {
    if (m.role === 'assistant' && m.finished && m.usagePrompt != null) {
      const now = { observed: m.usagePrompt, counts: addCounts(overhead, counts) };
      calibration = observe(calibration, now, lastObservation);
      lastObservation = now;
      lastPromptTokens = m.usagePrompt;
      if ((ctx.input.contextWindow ?? 0) > 0 && m.usagePrompt > (ctx.input.contextWindow ?? 0)) overWindow++;
    }
    counts = addCounts(counts, countsOfMessage(m));
  }
  return { index, tokens, usageRecovered, calibration, counts, lastObservation, lastPromptTokens, overWindow };
}

/** Adds the main-slice messages to the index; the newest finished assistant message with usage sets the tokens. */
export const indexMessages: SessionStep<Events<'messages.appended'>> = (ctx, event) => ({ ...ctx, ...indexedFields(ctx, event) });

function rungsReached(ctx: SessionContext, tokens: number = ctx.tokens): Reached {
  const fresh = ctx.input.thresholds.filter((t) => t <= tokens && !ctx.crossed.includes(t));
  if (fresh.length > 0) return { rungs: fresh, viaGate: false };
  const gate = ctx.recoveryGate;
  // The recovery gate re-fires the final rung exactly once.
  if (gate === null || tokens < gate) return NONE;
  return { rungs: [ctx.input.thresholds.at(-1) ?? gate], viaGate: true };
}

/**
 * Rungs that fire now, at the context's usage or at `usage` (what appended messages make it). Rungs are only consumed
 * when a writer could run: disabled switches, a drain and a busy writer leave them armed, and a usage already
 * recovered by a rebuild fires nothing.
 */
function dueRungs(ctx: SessionContext, usage: Pick<SessionContext, 'tokens' | 'usageRecovered'> = ctx): Reached {
  const canFire = ctx.input.checkpointEnabled && !ctx.input.memoryWriteDisabled && !ctx.draining && !usage.usageRecovered && ctx.writer === null;
  return canFire ? rungsReached(ctx, usage.tokens) : NONE;
}

const indexed = (ctx: SessionContext, event: Events<'messages.appended'>): SessionContext => indexMessages(ctx, event, () => {}, undefined);

/** Rungs due after the appended messages. Rungs depend on the usage only: the index is left as it is. */
const dueAfter = (ctx: SessionContext, event: Events<'messages.appended'>): Reached => dueRungs(ctx, usageAfter(ctx, event.messages));

/** Guard: the appended messages make at least one rung fire. */
export function reachesRung(ctx: SessionContext, event: Events<'messages.appended'>): boolean {
  return dueAfter(ctx, event).rungs.length > 0;
}

/** Guard: several rungs fire at once (the first starts a writer, the rest collapse into one queued request). */
export function reachesSeveralRungs(ctx: SessionContext, event: Events<'messages.appended'>): boolean {
  return dueAfter(ctx, event).rungs.length > 1;
}

/** Guard: a rung fires and the writer it asks for can start (with the messages indexed). */
export function canStartRungWriter(ctx: SessionContext, event: Events<'messages.appended'>): boolean {
  return dueAfter(ctx, event).rungs.length > 0 && canStartWriter(indexed(ctx, event));
}

/** The rung a threshold writer starts for: the lowest one firing now. */
export function firstDueRung(ctx: SessionContext): number | null {
  return dueRungs(ctx).rungs[0] ?? null;
}

/** Publishes `threshold.crossed` for every rung that fires now (run before the writer they ask for starts). */
export const announceCrossedRungs: SessionStep = (ctx, _event, emit) => {
  for (const threshold of dueRungs(ctx).rungs) emit({ kind: 'publish', event: { type: 'threshold.crossed', threshold, tokens: ctx.tokens } });
  return ctx;
};

/** Consumes the rungs that fired (run last: the writer they started already holds the slot), or the recovery gate. */
export const markRungsCrossed: SessionStep = (ctx) => {
  const { rungs, viaGate } = rungsReached(ctx);
  return viaGate ? { ...ctx, recoveryGate: null } : { ...ctx, crossed: [...ctx.crossed, ...rungs] };
};

/** Gate after a transient failure of the final rung's writer: one rung-step later, capped at `maxAllowed`. */
export function recoveryGateAfter(ctx: SessionContext, writer: RunningWriter, failure: Failure | undefined): number | null {
  const rungs = ctx.input.thresholds;
  const final = rungs.at(-1);
  if (final === undefined || writer.rung !== final || failure?.kind !== 'transient' || !failure.retryable) return null;
  const step = rungs.length > 1 ? final - (rungs.at(-2) ?? 0) : final;
  const gate = Math.min(writer.firedAt + step, ctx.input.maxAllowed);
  return gate > writer.firedAt ? gate : null;
}
