import { viewOf, withToolOutputs, type Message } from '@baton/protocol';
import type { SessionTimeline } from '@baton/runtime';
import { InspectorError } from './inspector-error.ts';

/** One message of a rebuilt context, as text. */
export interface ContextMessageView {
  readonly id: string;
  readonly role: string;
  readonly text: string;
  readonly toolCalls: readonly { readonly name: string; readonly arguments: string }[];
  readonly toolResults: readonly { readonly callId: string; readonly text: string }[];
  /** Baton's boundary message (the checkpoint and memory rendered as one user turn). */
  readonly inserted: boolean;
  /** A tool result whose output the rebuild replaced by a marker. */
  readonly cleared: boolean;
}

/** The context a rebuild handed the agent: its system prompt, Baton's boundary message, then the preserved tail. */
export interface RebuiltContextView {
  readonly number: number;
  readonly outcome: 'rendered' | 'compacted';
  readonly seq: number;
  readonly at: number;
  readonly tokens: number | null;
  readonly sections: readonly { readonly name: string; readonly tokens: number }[];
  readonly system: string | null;
  readonly messages: readonly ContextMessageView[];
}

function systemText(system: SessionTimeline['setup']['system']): string | null {
  if (system === null) return null;
  if (typeof system === 'string') return system;
  return system.map((part) => (typeof part === 'string' ? part : typeof part['text'] === 'string' ? part['text'] : JSON.stringify(part))).join('\n\n');
}

function messageView(m: Message, inserted: boolean, cleared: boolean): ContextMessageView {
  const v = viewOf(m);
  return {
    id: m.id,
    role: v.role,
    text: v.text,
    toolCalls: v.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
    toolResults: v.toolResults.map((r) => ({ callId: r.callId, text: r.text })),
    inserted,
    cleared,
  };
}

/**
 * The context rebuild `number` (1-based, in the order rebuilds were asked for) produced, rebuilt from the log as the
 * daemon's host resolves it: Baton's inserted messages from the rebuild records, every other body from the
 * `messages.appended` records, tool outputs cleared by this or an earlier rebuild replaced by their marker.
 *
 * @throws InspectorError 404 when there is no such rebuild or it ended without a context.
 */
export function rebuiltContext(timeline: SessionTimeline, number: number): RebuiltContextView {
  const bodies = new Map<string, Message>();
  const inserted = new Map<string, Message>();
  const cleared = new Map<string, string>();
  const numbers = new Map<string, number>();
  for (const e of timeline.entries) {
    if (e.writerId !== null) continue;
    if (e.type === 'messages.appended') for (const m of e.payload.messages) bodies.set(m.id, m);
    if (e.type === 'rebuild.requested') numbers.set(e.payload.requestId, numbers.size + 1);
    if (e.type !== 'rebuild.rendered' && e.type !== 'rebuild.compacted') continue;
    if (e.type === 'rebuild.rendered' && !e.payload.ok) continue;
    const { message, tailIds } = e.payload;
    if (message !== undefined) inserted.set(message.id, message);
    for (const id of e.payload.cleared ?? []) cleared.set(id, e.payload.clearedText ?? '');
    if (numbers.get(e.payload.requestId) !== number) continue;
    const ids = [...(message !== undefined ? [message.id] : []), ...tailIds.filter((id) => id !== message?.id)];
    const messages = ids.flatMap((id) => {
      const own = inserted.get(id);
      const body = own ?? bodies.get(id);
      if (body === undefined) return [];
      const marker = cleared.get(id);
      return [messageView(marker === undefined ? body : withToolOutputs(body, marker), own !== undefined, marker !== undefined)];
    });
    return {
      number,
      outcome: e.type === 'rebuild.compacted' ? 'compacted' : 'rendered',
      seq: e.seq,
      at: e.at,
      tokens: e.payload.tokens ?? null,
      sections: e.payload.sections ?? [],
      system: systemText(timeline.setup.system),
      messages,
    };
  }
  throw new InspectorError(404, `session ${timeline.sessionId} has no rebuilt context ${number} (${numbers.size} rebuild${numbers.size === 1 ? '' : 's'} asked for)`);
}
