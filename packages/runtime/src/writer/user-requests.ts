import { defaultTokenCounter, truncateHeadTail } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';
import { textOf } from '../rebuild/message-text.ts';

/**
 * The user's latest explicit requests, for the writer task: the texts of the newest user messages that say something
 * of the user's own, once the blocks coding agents wrap their context in (environment, instructions, reminders, IDE
 * selections, slash-command echoes) are taken out. A turn that is nothing but such blocks is not a request.
 */

/** Blocks agents put in user turns that are not the user's words. */
const WRAPPER = /<(environment_context|user_instructions|system-reminder|system_reminder|ide_[a-z_]+|command-[a-z]+|local-command-[a-z]+|user_shell_command|turn_aborted|permissions[\w -]*)(?:\s[^>]*)?>[\s\S]*?<\/\1>/gi;

/** Most requests shown, and most tokens of one (a longer one keeps its head and tail). */
const MAX_REQUESTS = 3;
const MAX_TOKENS = 1_500;

/** What of a user turn is the user's own words ('' when nothing is). */
export function explicitText(text: string): string {
  return text.replace(WRAPPER, '').trim();
}

/**
 * The newest explicit user requests among `messages` (the main slice's newest messages, oldest first) and `carried`
 * (the user's words a fitted rebuild took out of the context), oldest first, at most three, each verbatim up to
 * 1 500 tokens (head and tail of a longer one).
 */
export function latestUserRequests(messages: readonly Message[], carried: readonly { readonly id: string; readonly text: string }[]): string[] {
  const seen = new Set<string>();
  const candidates: { id: string; text: string }[] = [];
  for (const u of carried) candidates.push(u);
  for (const m of messages) if (viewOf(m).role === 'user' && !m.id.startsWith('baton-')) candidates.push({ id: m.id, text: textOf(m) });
  const out: string[] = [];
  for (let i = candidates.length - 1; i >= 0 && out.length < MAX_REQUESTS; i--) {
    const c = candidates[i];
    if (c === undefined || seen.has(c.id)) continue;
    seen.add(c.id);
    const text = explicitText(c.text);
    if (text === '') continue;
    out.unshift(truncateHeadTail(text, MAX_TOKENS, (n) => `[… ${n} tokens of this request left out …]`, defaultTokenCounter)?.text ?? text);
  }
  return out;
}
