import { viewOf, withToolOutputs, type Message } from '@baton/protocol';
import { unseenFrom, validTail } from './preserved-tail.ts';
import { shrinkMessage, type ShrinkOptions } from './shrink-message.ts';

/**
 * Fitting the preserved tail of a rebuild into its share of the window. The tail is cut into steps — a user message,
 * or an assistant turn with the tool results that answer it — and made to fit in a fixed order, each measure taken
 * only when the ones before it were not enough:
 *  (a) cut: keep the newest steps that fit (at least `minSteps` of them), never splitting a call from its result;
 *  (b) clear: replace the outputs of older tool results in what is kept with a short note (never the results after the
 *      newest assistant message: the model has not read them yet);
 *  (c) truncate: cut an oversized item the model has read (more than half the budget alone) to its head and tail;
 *  then the oldest kept step goes too, and (b) and (c) run again, down to the newest step alone. The newest step — the
 *  results the model is about to read, the user's newest words — stays whole as long as it fits the hard `limit`;
 *  beyond it, its largest items are cut (the user's own words only when they alone do not fit). What was cut is
 *  returned as `dropped`, for the rebuild to summarise (the compaction of what no checkpoint covers).
 */

/** One measure the fit took, and how much it moved. */
export interface FitStep {
  readonly step: 'cut' | 'clear' | 'truncate' | 'truncate-user';
  /** Messages it touched. */
  readonly messages: number;
  /** Provider tokens it saved. */
  readonly tokens: number;
}

export interface TailFitInput {
  /** The preserved tail before fitting: a valid request in the session's API, oldest first. */
  readonly candidates: readonly Message[];
  /** What the provider counts for a message as it is sent (a changed one is measured, an unchanged one indexed). */
  readonly cost: (m: Message, changed: boolean) => number;
  /** What the provider counts for a message the fit is still cutting (`cost` may remember a message's count). */
  readonly measure: (m: Message) => number;
  /** Provider tokens per Baton token of a message's text (its kind's calibrated ratio). */
  readonly ratioOf: (m: Message) => number;
  /** Provider tokens the tail should take. */
  readonly budget: number;
  /**
   * Provider tokens the tail must never take more of (what the usable window leaves it): the newest step — the results
   * the model is about to read, the user's newest words — is cut only to meet this, never the softer `budget`.
   */
  readonly limit: number;
  /** Newest steps kept whole before outputs are cleared or texts cut. */
  readonly minSteps: number;
  /** The note that replaces a cleared tool output. */
  readonly clearedText: (m: Message) => string;
  readonly shrink: Omit<ShrinkOptions, 'measure' | 'ratio'>;
}

export interface TailFit {
  readonly kept: readonly Message[];
  /** Candidates the fit took out, oldest first. */
  readonly dropped: readonly Message[];
  /** Kept messages sent otherwise than they were recorded (an output cleared, a text cut), by id. */
  readonly changed: ReadonlyMap<string, Message>;
  readonly steps: readonly FitStep[];
  /** Provider tokens of `kept`. */
  readonly tokens: number;
}

/** Start indexes of the steps of `messages`: a user or system message, or an assistant turn and its tool results. */
export function stepStarts(messages: readonly Message[]): number[] {
  const roles = messages.map((m) => viewOf(m).role);
  const starts: number[] = [];
  roles.forEach((role, i) => {
    if (i === 0 || role === 'user' || role === 'system' || (role === 'assistant' && roles[i - 1] !== 'assistant')) starts.push(i);
  });
  return starts;
}

/** Fits the tail; see the module comment for the order of the measures. */
export function fitTail(input: TailFitInput): TailFit {
  const changed = new Map<string, Message>();
  const steps: FitStep[] = [];
  const costOf = (m: Message): number => input.cost(m, changed.has(m.id));
  const sum = (ms: readonly Message[]): number => ms.reduce((n, m) => n + costOf(m), 0);
  const record = (step: FitStep['step'], messages: number, tokens: number): void => {
    if (messages === 0) return;
    const last = steps.at(-1);
    steps[last?.step === step ? steps.length - 1 : steps.length] =
      last?.step === step ? { step, messages: last.messages + messages, tokens: last.tokens + tokens } : { step, messages, tokens };
  };

  const all = [...input.candidates];
  const starts = stepStarts(all);
  // (a) The newest steps that fit, at least `minSteps` of them.
  let first = starts.length;
  let newest = 0;
  for (let s = starts.length - 1; s >= 0; s -= 1) {
    const stepCost = sum(all.slice(starts[s], starts[s + 1] ?? all.length));
    if (starts.length - s > input.minSteps && newest + stepCost > input.budget) break;
    newest += stepCost;
    first = s;
  }
  let kept = validTail(all.slice(starts[first] ?? all.length));
  let total = sum(kept);
  const cut = (from: number): void => {
    const before = kept.length;
    const saved = total;
    kept = validTail(kept.slice(from));
    total = sum(kept);
    record('cut', before - kept.length, saved - total);
  };
  record('cut', all.length - kept.length, sum(all) - total);

  const replace = (i: number, next: Message): number => {
    const before = costOf(kept[i] as Message);
    changed.set(next.id, next);
    kept[i] = next;
    const after = costOf(next);
    total += after - before;
    return before - after;
  };

  /**
   * Cuts the largest items of a kind until the tail fits or nothing more can be cut: `users` the user's words or the
   * others'; `from` the first index it may touch (the results the model has not read yet start at `unseenFrom`);
   * `oversized` only items that alone take more than half the budget.
   */
  const truncateLargest = (users: boolean, range: { from: number; to: number }, oversized: boolean, goal: number): void => {
    const done = new Set<string>();
    while (total > goal) {
      let at = -1;
      let size = oversized ? Math.floor(input.budget / 2) : 0;
      kept.forEach((m, i) => {
        if (i < range.from || i >= range.to || (viewOf(m).role === 'user') !== users || done.has(m.id)) return;
        const c = costOf(m);
        if (c > size) {
          size = c;
          at = i;
        }
      });
      if (at < 0) return;
      const m = kept[at] as Message;
      done.add(m.id);
      const shorter = shrinkMessage(m, Math.max(0, size - (total - goal)), { ...input.shrink, measure: input.measure, ratio: input.ratioOf(m) }, size);
      if (shorter !== null && shorter !== m) record(users ? 'truncate-user' : 'truncate', 1, replace(at, shorter));
    }
  };

  while (total > input.budget) {
    // (b) Older tool outputs, oldest first (an output shorter than the note that would replace it stays).
    const unseen = unseenFrom(kept);
    for (let i = 0; i < unseen && total > input.budget; i += 1) {
      const m = kept[i] as Message;
      if (viewOf(m).role !== 'tool' || changed.has(m.id)) continue;
      const cleared = withToolOutputs(m, input.clearedText(m));
      if (input.cost(cleared, true) < costOf(m)) record('clear', 1, replace(i, cleared));
    }
    // (c) An oversized item the model has read (more than half the budget alone).
    truncateLargest(false, { from: 0, to: unseen }, true, input.budget);
    if (total <= input.budget) break;
    // The oldest kept step goes too, down to the newest alone.
    const keptStarts = stepStarts(kept);
    if (keptStarts.length > 1) {
      cut(keptStarts[1] ?? kept.length);
      continue;
    }
    // The newest step alone is over the budget: it stays whole as long as it fits the limit; beyond, its largest items
    // are cut, the user's words only when they alone are over it.
    const all = { from: 0, to: kept.length };
    truncateLargest(false, all, false, input.limit);
    if (total > input.limit && sum(kept.filter((m) => viewOf(m).role === 'user')) > input.limit) truncateLargest(true, all, false, input.limit);
    break;
  }

  const keptIds = new Set(kept.map((m) => m.id));
  return {
    kept,
    dropped: all.filter((m) => !keptIds.has(m.id)),
    changed: new Map([...changed].filter(([id]) => keptIds.has(id))),
    steps,
    tokens: total,
  };
}
