import { hash } from 'node:crypto';
import type { AgentItem } from './agent-request.ts';
import type { ChatMessage } from './chat-request.ts';

/**
 * The content a digest is taken of: one bare text block (`[{ type: 'text', text }]`, nothing else) is the same message
 * as its text, as both APIs that have it define it. Claude Code sends its newest prompt as such a block (with a
 * `cache_control` marker, left out before this) and re-sends it as a plain string once the marker has moved on, while
 * other agents keep the block: both are one message, recorded in the form it first came in.
 */
function digestForm(m: AgentItem): AgentItem {
  const content = m['content'];
  if (!Array.isArray(content) || content.length !== 1) return m;
  const block = content[0] as Record<string, unknown> | null;
  if (block?.['type'] !== 'text' || typeof block['text'] !== 'string' || Object.keys(block).length !== 2) return m;
  return { ...m, content: block['text'] };
}

/**
 * A conversation item's content digest: the same item re-sent gives the same digest. Taken several times per recorded
 * call, so in one shot (no `Hash` object per item; the same SHA-256 as `createHash`).
 */
export function messageDigest(m: AgentItem): string {
  return hash('sha256', JSON.stringify(digestForm(m)), 'base64url').slice(0, 16);
}

/** An item as the agent sent it. */
const asSent = (item: AgentItem): AgentItem => item;

/** Digests already taken, by canonical form and by the agent's item (an item is never modified once parsed). */
const digests = new WeakMap<(item: AgentItem) => AgentItem, WeakMap<AgentItem, string>>();

/**
 * The digest of an agent's item in its `canonical` form, taken once per item object: an item of a history the gateway
 * has already read (`ParsedPrefixes` hands the same objects to the next request) is not serialised again.
 */
export function itemDigest(item: AgentItem, canonical: (item: AgentItem) => AgentItem): string {
  let known = digests.get(canonical);
  if (known === undefined) digests.set(canonical, (known = new WeakMap()));
  let digest = known.get(item);
  if (digest === undefined) known.set(item, (digest = messageDigest(canonical(item))));
  return digest;
}

/**
 * The id the gateway records the `index`-th message of a history under: its position and its digest, so a re-sent
 * history is deduplicated by the daemon and an edited earlier message is a different one.
 */
export function messageId(index: number, digest: string): string {
  return `g${index}-${digest}`;
}

/** The request's history split into its leading system (or developer) messages and the conversation after them. */
export function splitHistory(messages: readonly ChatMessage[]): { system: ChatMessage[]; history: ChatMessage[] } {
  let n = 0;
  while (n < messages.length && (messages[n]?.role === 'system' || messages[n]?.role === 'developer')) n++;
  return { system: messages.slice(0, n), history: messages.slice(n) };
}

/**
 * The system prompt as the daemon records it (`open.system`): the text of each leading system message, or null when
 * one of them is not plain text (then fork mode cannot reproduce it byte for byte).
 */
export function systemPrompt(system: readonly ChatMessage[]): string[] | null {
  const texts: string[] = [];
  for (const m of system) {
    const keys = Object.keys(m);
    if (m.role !== 'system' || typeof m['content'] !== 'string' || keys.some((k) => k !== 'role' && k !== 'content')) return null;
    texts.push(m['content']);
  }
  return texts;
}

/**
 * Whether `history` continues what was recorded (digests `recorded`, oldest first): it is at least as long and its
 * first, middle and last recorded positions hold the same messages. Checking three positions keeps a long history's
 * check constant-time; an agent that compacted or edited its history changes its first messages (the summary
 * replaces them), and one that dropped the tail changes the last.
 */
export function continues(recorded: readonly string[], history: readonly AgentItem[], canonical: (item: AgentItem) => AgentItem = asSent): boolean {
  if (history.length < recorded.length) return false;
  if (recorded.length === 0) return true;
  const positions = new Set([0, recorded.length >> 1, recorded.length - 1]);
  for (const i of positions) if (recorded[i] !== itemDigest(history[i] as AgentItem, canonical)) return false;
  return true;
}
