/**
 * Deterministic main-slice chat messages of a given size for the process-level benchmarks (`concurrency`, `memory`,
 * `session-load`): user and assistant turns in prose and code-like text (so the tokenizer sees realistic input), the
 * assistant ones with `finish_reason` and provider `usage`.
 */
import type { Message } from '@baton/protocol';

/** Deterministic PRNG (LCG): `next(n)` in [0, n) (the same as `coding-conversation.ts`, without its imports). */
function prng(seed: number): (n: number) => number {
  let x = (seed * 2654435761) >>> 0 || 1;
  return (n) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
}

const WORDS = [
  'the', 'session', 'writer', 'checkpoint', 'log', 'append', 'reply', 'durable', 'commit', 'worker', 'thread', 'state',
  'message', 'token', 'usage', 'window', 'threshold', 'rebuild', 'context', 'boundary', 'snapshot', 'replay', 'fold',
  'and', 'then', 'after', 'before', 'because', 'so', 'we', 'it', 'is', 'was', 'not', 'a', 'of', 'in', 'to', 'for',
];
const CODE = [
  'const', 'await', 'return', 'function', 'export', 'interface', 'readonly', 'string', 'number', 'Promise<void>',
  'this.#log.append(sessionId, records);', 'if (result === undefined) throw new Error("missing");', '=>', '{', '}', '();',
];

/** About `bytes` characters of text, unique to `seed`: sentences, every few of them a line of code. */
export function chatText(seed: number, bytes: number): string {
  const next = prng(seed + 1);
  let out = '';
  while (out.length < bytes) {
    const code = next(5) === 0;
    const pool = code ? CODE : WORDS;
    const n = 6 + next(12);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(pool[next(pool.length)] as string);
    out += code ? `\n    ${words.join(' ')} // ${seed}.${next(1000)}\n` : `${words.join(' ')} ${next(10_000)}. `;
  }
  return out.slice(0, bytes);
}

/**
 * Message `i` of a conversation tagged `tag` (ids `<tag>-<i>`): even ones from the user, odd ones from the assistant
 * with usage (`promptTokens` given by the caller, e.g. the conversation's running total).
 */
export function chatMessage(tag: string, i: number, bytes: number, promptTokens = 1_000 + i * 64): Message {
  const content = chatText(i * 7919 + tag.length, bytes);
  const created = 1_750_000_000_000 + i;
  if (i % 2 === 0) return { id: `${tag}-${i}`, role: 'user', content, created_at: created };
  const completion = Math.max(1, Math.round(bytes / 4));
  return {
    id: `${tag}-${i}`,
    role: 'assistant',
    content,
    finish_reason: 'stop',
    usage: { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion },
    created_at: created,
  };
}
