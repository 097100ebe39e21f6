import type { SessionContext } from '@baton/actors';
import { defaultTokenCounter, scaleRebuildCaps, type RebuildCaps, type RecentUserMessage } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';
import { clearedNote, sessionCosts, shrinkOptions, type FitOptions, type SessionCosts } from './fit-costs.ts';
import { fitTail, type FitStep } from './fit-tail.ts';
import { textOf } from './message-text.ts';
import { uncoveredSteps } from './uncovered-steps.ts';

/**
 * Fitting a whole rebuilt request into the session's usable window, by its calibrated count: the system prompt and
 * tools (fixed), the boundary message Baton renders, and the preserved tail. The boundary is rendered first as if
 * nothing were taken out; when the request would not fit the target share of the usable window, the tail is fitted
 * (`fitTail`) into what the boundary leaves, and what it took out — the compaction of what no checkpoint covers — goes
 * into the boundary: one line per step, and the user's words whole. A boundary that leaves no room for the
 * conversation (a small window) is rendered again with smaller caps. The result never exceeds the usable window
 * unless even the system prompt, the tools and the newest step alone do not fit, which the record says.
 */

/** What earlier fitted rebuilds took out of the context and no checkpoint covers yet, carried to the next one. */
export interface Uncovered {
  readonly lines: string[];
  readonly users: { id: string; text: string }[];
}

export const NOTHING_UNCOVERED: Uncovered = { lines: [], users: [] };

/** A rendered boundary message: its text, its token count and its sections. */
export interface RenderedBoundary {
  readonly text: string;
  readonly tokens: number;
  readonly sections: readonly { readonly name: string; readonly tokens: number }[];
  readonly userCut: readonly string[];
}

/** Renders the boundary message with these caps, these user messages and these lines of uncovered steps. */
export type BoundaryRender = (caps: RebuildCaps, recentUser: RecentUserMessage[], uncovered: readonly string[]) => RenderedBoundary | null;

export interface FitRebuildInput {
  readonly ctx: SessionContext;
  /** The preserved tail, compactable outputs already cleared. */
  readonly candidates: readonly Message[];
  /** Ids of candidates whose outputs were cleared already (measured as they are, never cleared again). */
  readonly cleared: ReadonlySet<string>;
  readonly carried: Uncovered;
  /** The user messages of the main slice (its newest ones), oldest first. */
  readonly mainUsers: readonly RecentUserMessage[];
  readonly render: BoundaryRender;
  readonly caps: RebuildCaps;
  readonly options: FitOptions;
}

/** The fields of a `rebuild.rendered` (or `rebuild.compacted`) record a fitted rebuild fills in. */
export interface FitRecord {
  readonly tokens: number;
  readonly sections: { name: string; tokens: number }[];
  readonly replaced?: Message[];
  readonly adjusted?: { id: string; tokens: number; images?: number | undefined }[];
  readonly catchUp?: boolean;
  readonly uncovered?: Uncovered;
  readonly fit?: FitReport;
}

/** What the fit did, as the log keeps it: its budget, the counts it reached and the measures it took, in order. */
export interface FitReport {
  readonly limit: number;
  readonly target: number;
  /** Provider tokens the tail was given. */
  readonly budget: number;
  readonly tokens: { readonly overhead: number; readonly boundary: number; readonly tail: number; readonly total: number };
  readonly fits: boolean;
  readonly steps: { step: FitStep['step'] | 'summarise-user' | 'smaller-caps'; messages: number; tokens: number }[];
  readonly calibration: { readonly text: number; readonly tool: number; readonly image: number; readonly message: number };
}

export interface FittedRebuild {
  readonly text: string;
  readonly boundaryTokens: number;
  readonly kept: readonly Message[];
  /** Kept messages the fit changed (an output cleared, a text cut), by id. */
  readonly changed: ReadonlyMap<string, Message>;
  readonly record: FitRecord;
}

/** Attempts at a boundary that leaves the conversation room, each with caps 60 % of the previous. */
const MAX_ATTEMPTS = 6;
const CAPS_STEP = 0.6;
/** The tail gets at least this share of what is left of the usable window once the boundary and system are in. */
const MIN_TAIL_SHARE = 0.5;
/** A boundary is rendered with smaller caps when it leaves the tail less than this share of the usable window. */
const MIN_ROOM_SHARE = 0.2;

/** The user messages the boundary shows: those not in the tail, the uncovered ones whole (newest last). */
function recentUsers(mainUsers: readonly RecentUserMessage[], kept: readonly Message[], uncovered: readonly { id: string; text: string }[]): RecentUserMessage[] {
  const keptIds = new Set(kept.map((m) => m.id));
  const verbatim = new Map<string, RecentUserMessage>();
  for (const u of uncovered) if (!keptIds.has(u.id)) verbatim.set(u.id, { id: u.id, text: u.text, verbatim: true });
  return [...mainUsers.filter((u) => !keptIds.has(u.id) && !verbatim.has(u.id)), ...verbatim.values()];
}

/** `carried` plus what this rebuild took out (`dropped`): step lines, and the user's messages whole. */
function uncoveredAfter(carried: Uncovered, dropped: readonly Message[]): Uncovered {
  if (dropped.length === 0) return carried;
  const users = dropped.filter((m) => viewOf(m).role === 'user').map((m) => ({ id: m.id, text: textOf(m) }));
  const known = new Set(carried.users.map((u) => u.id));
  return { lines: [...carried.lines, ...uncoveredSteps(dropped)], users: [...carried.users, ...users.filter((u) => !known.has(u.id))] };
}

/** Fits the rebuilt request; null when the boundary renders nothing (no memory to rebuild from). */
export function fitRebuild(input: FitRebuildInput): FittedRebuild | null {
  const { ctx, candidates, cleared, options } = input;
  const costs = sessionCosts(ctx);
  const cost = (m: Message, changed: boolean): number => costs.message(m, changed || cleared.has(m.id));
  const candidateCost = candidates.reduce((sum, m) => sum + cost(m, false), 0);
  const limit = costs.usable;
  const target = Math.floor(limit * options.targetShare);
  const measures: FitReport['steps'] = [];
  let caps = input.caps;
  let best: { fitted: FittedRebuild; total: number } | null = null;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const whole = input.render(caps, recentUsers(input.mainUsers, candidates, input.carried.users), input.carried.lines);
    if (whole === null) return null;
    const wholeTotal = costs.overhead + costs.text(whole.tokens) + candidateCost;
    // Nothing to fit: the whole tail after the watermark goes (also when the session has no usable window to fit).
    if (limit <= 0 || wholeTotal <= target) {
      return finish(input, costs, whole, candidates, new Map(), input.carried, { limit, target, budget: candidateCost, overhead: costs.overhead, tail: candidateCost, measures });
    }
    const reserve = costs.text(caps.uncovered);
    const boundary = costs.text(whole.tokens) + reserve;
    const room = limit - costs.overhead - boundary;
    if (room < limit * MIN_ROOM_SHARE && attempt < MAX_ATTEMPTS - 1) {
      caps = scaleRebuildCaps(caps, CAPS_STEP);
      measures.push({ step: 'smaller-caps', messages: 0, tokens: whole.tokens });
      continue;
    }
    const budget = Math.max(0, Math.min(room, Math.max(target - costs.overhead - boundary, Math.floor(room * MIN_TAIL_SHARE))));
    const tail = fitTail({
      candidates,
      cost,
      measure: costs.measure,
      ratioOf: costs.ratioOf,
      budget,
      limit: Math.max(budget, room),
      minSteps: options.minSteps,
      clearedText: clearedNote(candidates, costs),
      shrink: shrinkOptions(),
    });
    const uncovered = uncoveredAfter(input.carried, tail.dropped);
    const rendered = input.render(caps, recentUsers(input.mainUsers, tail.kept, uncovered.users), uncovered.lines);
    if (rendered === null) return null;
    const total = costs.overhead + costs.text(rendered.tokens) + tail.tokens;
    const fitted = finish(input, costs, rendered, tail.kept, tail.changed, uncovered, {
      limit,
      target,
      budget,
      overhead: costs.overhead,
      tail: tail.tokens,
      measures: [...measures, ...tail.steps],
    });
    if (best === null || total < best.total) best = { fitted, total };
    if (total <= limit) return fitted;
    caps = scaleRebuildCaps(caps, CAPS_STEP);
    measures.push({ step: 'smaller-caps', messages: 0, tokens: rendered.tokens });
  }
  return best?.fitted ?? null;
}

function finish(
  input: FitRebuildInput,
  costs: SessionCosts,
  rendered: RenderedBoundary,
  kept: readonly Message[],
  changed: ReadonlyMap<string, Message>,
  uncovered: Uncovered,
  sizes: { limit: number; target: number; budget: number; overhead: number; tail: number; measures: FitReport['steps'] },
): FittedRebuild {
  const { ctx, cleared, options } = input;
  const dropped = kept.length < input.candidates.length;
  const candidateCost = input.candidates.reduce((sum, m) => sum + costs.message(m, cleared.has(m.id)), 0);
  const carried = costs.text(defaultTokenCounter.count([...input.carried.lines, ...input.carried.users.map((u) => u.text)].join('\n')));
  // The messages no checkpoint covers take more of the window than the lag share, or some had to go: a writer should
  // bring the checkpoint up to this boundary now, rather than at the next rung.
  const catchUp = sizes.limit > 0 && (dropped || candidateCost + carried > sizes.limit * options.lagShare);
  const steps = [...sizes.measures, ...(rendered.userCut.length > 0 ? [{ step: 'summarise-user' as const, messages: rendered.userCut.length, tokens: 0 }] : [])];
  const adjusted = kept.flatMap((m) => (changed.has(m.id) || cleared.has(m.id) ? [costs.entryOf(m)] : []));
  const boundaryTokens = costs.text(rendered.tokens);
  return {
    text: rendered.text,
    boundaryTokens: rendered.tokens,
    kept,
    changed,
    record: {
      tokens: rendered.tokens,
      sections: rendered.sections.map((s) => ({ name: s.name, tokens: s.tokens })),
      ...(changed.size > 0 ? { replaced: [...changed.values()] } : {}),
      ...(adjusted.length > 0 ? { adjusted } : {}),
      ...(catchUp ? { catchUp } : {}),
      ...(uncovered.lines.length > 0 || uncovered.users.length > 0 ? { uncovered } : {}),
      fit: {
        limit: sizes.limit,
        target: sizes.target,
        budget: sizes.budget,
        tokens: { overhead: sizes.overhead, boundary: boundaryTokens, tail: sizes.tail, total: sizes.overhead + boundaryTokens + sizes.tail },
        fits: sizes.limit <= 0 || sizes.overhead + boundaryTokens + sizes.tail <= sizes.limit,
        steps,
        calibration: { text: ctx.calibration.text, tool: ctx.calibration.tool, image: ctx.calibration.image, message: ctx.calibration.perMessage ?? 0 },
      },
    },
  };
}
