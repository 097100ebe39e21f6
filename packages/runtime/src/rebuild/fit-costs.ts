import { calibratedTokens, countsOfMessage, indexEntries, type IndexedMessage, type SessionContext } from '@baton/actors';
import { defaultTokenCounter, fillLabel, loadPromptLabels } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';
import { indexMessages } from './message-index.ts';
import { z } from 'zod';
import type { ShrinkOptions } from './shrink-message.ts';

/**
 * What a rebuilt request costs, in the provider's tokens: Baton's own counts scaled by the session's calibration (a
 * ratio per kind of content, learnt from the usage the replies reported). The boundary message is text and is counted
 * with the text ratio, so a heavy ratio learnt from tool outputs never shrinks the room for the checkpoint.
 */

/** How much of the window a rebuild aims at and when the checkpoint is asked to catch up. */
export interface FitOptions {
  /** Share of the usable window a rebuilt request (system prompt, tools, boundary message, tail) aims at. */
  readonly targetShare: number;
  /**
   * Share of the usable window the messages no checkpoint covers may take before a rebuild asks a writer to catch
   * up (a rebuild that has to take messages out of the context always does).
   */
  readonly lagShare: number;
  /** Newest steps of the tail kept whole before older outputs are cleared or texts cut. */
  readonly minSteps: number;
}

export const DEFAULT_FIT_OPTIONS: FitOptions = Object.freeze({ targetShare: 0.6, lagShare: 0.4, minSteps: 2 });

const Share = z.number().gt(0).max(1);

/** `DaemonOptions.fit`: any subset of {@link FitOptions}; unknown keys are refused. */
export const FitOptionsSchema = z.strictObject({ targetShare: Share.optional(), lagShare: Share.optional(), minSteps: z.int().min(1).max(50).optional() });

/**
 * `overrides` onto {@link DEFAULT_FIT_OPTIONS}, once at start-up.
 *
 * @throws Error naming the offending key (`fit.targetShare: …`).
 */
export function resolveFitOptions(overrides: unknown = {}): FitOptions {
  const parsed = FitOptionsSchema.safeParse(overrides ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = ['fit', ...(issue?.path.map(String) ?? []), ...(issue?.code === 'unrecognized_keys' ? issue.keys : [])].join('.');
    throw new Error(`${key}: ${issue?.message ?? 'invalid fit options'}`);
  }
  const { targetShare, lagShare, minSteps } = parsed.data;
  return Object.freeze({
    targetShare: targetShare ?? DEFAULT_FIT_OPTIONS.targetShare,
    lagShare: lagShare ?? DEFAULT_FIT_OPTIONS.lagShare,
    minSteps: minSteps ?? DEFAULT_FIT_OPTIONS.minSteps,
  });
}

/** A session's costs, in provider tokens. */
export interface SessionCosts {
  readonly usable: number;
  /** The system prompt and tool definitions every request carries. */
  readonly overhead: number;
  /** A text of `tokens` Baton tokens (the boundary message). */
  readonly text: (tokens: number) => number;
  /**
   * A message as it is sent: the index's count when unchanged, measured when Baton changed it (once per message
   * object: a message handed here is never mutated afterwards).
   */
  readonly message: (m: Message, changed: boolean) => number;
  /** A message Baton is still changing, measured every time. */
  readonly measure: (m: Message) => number;
  /** Provider tokens per Baton token of a message's text. */
  readonly ratioOf: (m: Message) => number;
  /** The index entry (tokens and images) of a message as it is sent. */
  readonly entryOf: (m: Message) => { readonly id: string; readonly tokens: number; readonly images?: number | undefined };
}

export function sessionCosts(ctx: SessionContext): SessionCosts {
  const calibration = ctx.calibration;
  const indexed = new Map(indexEntries(ctx.index).map((e) => [e.id, e]));
  // A changed message is counted once however often the fit weighs it (messages are never mutated once built).
  const counted = new WeakMap<Message, IndexedMessage | undefined>();
  const entryFor = (m: Message): IndexedMessage | undefined => {
    if (!counted.has(m)) counted.set(m, indexMessages([m])[0]);
    return counted.get(m);
  };
  const tokensOf = (entry: Parameters<typeof countsOfMessage>[0] | undefined): number => (entry === undefined ? 0 : calibratedTokens(calibration, countsOfMessage(entry)));
  return {
    usable: ctx.input.usableWindow,
    overhead: calibratedTokens(calibration, { text: ctx.input.overheadTokens ?? 0, tool: 0, images: 0 }),
    text: (tokens) => calibratedTokens(calibration, { text: tokens, tool: 0, images: 0 }),
    message: (m, changed) => {
      const entry = changed ? undefined : indexed.get(m.id);
      return tokensOf(entry ?? entryFor(m));
    },
    measure: (m) => tokensOf(indexMessages([m])[0]),
    ratioOf: (m) => (viewOf(m).role === 'tool' ? calibration.tool : calibration.text),
    entryOf: (m) => {
      const entry = entryFor(m);
      return { id: m.id, tokens: entry?.tokens ?? 0, ...(entry?.images !== undefined ? { images: entry.images } : {}) };
    },
  };
}

const LABELS = ['cleared', 'truncated', 'image'] as const;

/** How a fitted rebuild cuts texts: the marker it leaves and the note that stands for an image. */
export function shrinkOptions(): Omit<ShrinkOptions, 'measure' | 'ratio'> {
  const labels = loadPromptLabels('fit-labels', LABELS);
  return {
    counter: defaultTokenCounter,
    marker: (elided) => fillLabel(labels.truncated, { ELIDED_TOKENS: String(elided) }),
    imageNote: labels.image,
  };
}

/** The note that replaces a tool output a fitted rebuild cleared: which tool, how large, and how to get it again. */
export function clearedNote(tail: readonly Message[], costs: SessionCosts): (m: Message) => string {
  const labels = loadPromptLabels('fit-labels', LABELS);
  const names = new Map<string, string>();
  for (const m of tail) for (const c of viewOf(m).toolCalls) names.set(c.id, c.name);
  return (m) => {
    const tool = viewOf(m).toolResults.map((r) => names.get(r.callId) ?? 'a tool').join(', ') || 'a tool';
    return fillLabel(labels.cleared, { TOOL: tool, TOKENS: String(costs.message(m, false)) });
  };
}
