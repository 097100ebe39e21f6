import { createHash } from 'node:crypto';
import type { AnthropicPrompt } from './anthropic-request.ts';

/** Most `cache_control` breakpoints a request may carry; more is a 400. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** Measured usage of one Messages request's prompt. */
export interface BreakpointMeasure {
  /** All input tokens: `inputTokens + cacheCreationTokens + cacheReadTokens`. */
  readonly totalTokens: number;
  /** The uncached remainder (what Anthropic reports as `input_tokens`). */
  readonly inputTokens: number;
  readonly cacheCreationTokens: number;
  readonly cacheReadTokens: number;
}

/** One block of the prompt in cache order, serialized without its `cache_control` markers. */
interface Segment {
  readonly text: string;
  /** `cache_control` markers on the block and on blocks nested in it (a `tool_result`'s content). */
  readonly breakpoints: number;
}

function hasControl(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const control = (value as Record<string, unknown>)['cache_control'];
  return control !== undefined && control !== null;
}

function withoutCacheControl(value: object): object {
  const { cache_control: _ignored, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** The block's markers and its key text: nested content blocks lose their markers too. */
function segment(owner: string, block: object): Segment {
  const rest = withoutCacheControl(block) as Record<string, unknown>;
  const nested = Array.isArray(rest['content']) ? (rest['content'] as unknown[]) : [];
  const nestedMarkers = nested.filter(hasControl).length;
  const stripped = nestedMarkers === 0 ? rest : { ...rest, content: nested.map((b) => (hasControl(b) ? withoutCacheControl(b as object) : b)) };
  return { text: JSON.stringify([owner, stripped]), breakpoints: (hasControl(block) ? 1 : 0) + nestedMarkers };
}

/** The prompt's blocks in cache order: tools, then system blocks, then each message's content blocks. */
function segments(prompt: AnthropicPrompt): Segment[] {
  const out: Segment[] = [];
  const add = (owner: string, block: object): void => void out.push(segment(owner, block));
  for (const tool of prompt.tools ?? []) add('tool', tool);
  if (typeof prompt.system === 'string') add('system', { type: 'text', text: prompt.system });
  else for (const block of prompt.system ?? []) add('system', block);
  for (const message of prompt.messages) {
    if (typeof message.content === 'string') add(message.role, { type: 'text', text: message.content });
    else for (const block of message.content) add(message.role, block);
  }
  return out;
}

/** Number of `cache_control` markers in the prompt (tools, system blocks, message content blocks and their content). */
export function countBreakpoints(prompt: AnthropicPrompt): number {
  return segments(prompt).reduce((sum, s) => sum + s.breakpoints, 0);
}

function chainHash(previous: string, text: string): string {
  return createHash('sha256').update(previous).update('\u0000').update(text).digest('hex');
}

/**
 * A simulated Anthropic prompt cache, modelling its explicit breakpoints simply:
 * - the prompt is a list of blocks in the order tools → system blocks → message content blocks (a string system or
 *   message content is one text block); a block carrying `cache_control` (itself, or a block nested in its
 *   content, as in a `tool_result`) is a breakpoint after that block (at most {@link MAX_CACHE_BREAKPOINTS} markers,
 *   checked by the server before this runs). The model is part of every key; `cache_control` itself is not (moving
 *   a breakpoint does not change the prefix before it);
 * - a request with no breakpoint neither reads nor writes the cache;
 * - read: the longest prefix, ending at or before the request's last breakpoint, that an earlier request wrote
 *   (`cache_read_input_tokens`). Unlike the real service there is no 20-block look-back limit and no expiry;
 * - write: every breakpoint prefix of at least `minCacheableTokens` tokens is remembered, and the tokens from the end
 *   of the read up to the last breakpoint are `cache_creation_input_tokens` (0 when that prefix is shorter than the
 *   minimum: such prefixes are not cached at all);
 * - `input_tokens` is what remains: everything after the last cached breakpoint (all of it when nothing is cached).
 * Token counts come from `count` (o200k, the same counter as the OpenAI cache), per serialized block.
 */
export class BreakpointCache {
  readonly #count: (text: string) => number;
  readonly #minCacheableTokens: number;
  readonly #written = new Set<string>();

  constructor(count: (text: string) => number, minCacheableTokens: number) {
    this.#count = count;
    this.#minCacheableTokens = minCacheableTokens;
  }

  /** Total input tokens of the prompt (what `count_tokens` answers); remembers nothing. */
  count(prompt: AnthropicPrompt): number {
    return segments(prompt).reduce((sum, s) => sum + this.#count(s.text), 0);
  }

  /** Measures the prompt against earlier requests, then remembers its cacheable breakpoint prefixes. */
  observe(prompt: AnthropicPrompt): BreakpointMeasure {
    const blocks = segments(prompt);
    let chain = chainHash('', prompt.model);
    let tokens = 0;
    let lastBreakpoint = -1;
    const prefixes = blocks.map((block, i) => {
      chain = chainHash(chain, block.text);
      tokens += this.#count(block.text);
      if (block.breakpoints > 0) lastBreakpoint = i;
      return { chain, tokens, breakpoint: block.breakpoints > 0 };
    });
    const totalTokens = tokens;
    if (lastBreakpoint < 0) return { totalTokens, inputTokens: totalTokens, cacheCreationTokens: 0, cacheReadTokens: 0 };
    let cacheReadTokens = 0;
    for (const prefix of prefixes.slice(0, lastBreakpoint + 1)) if (this.#written.has(prefix.chain)) cacheReadTokens = prefix.tokens;
    const cached = prefixes[lastBreakpoint]?.tokens ?? 0;
    const cacheCreationTokens = cached >= this.#minCacheableTokens ? Math.max(0, cached - cacheReadTokens) : 0;
    for (const prefix of prefixes) if (prefix.breakpoint && prefix.tokens >= this.#minCacheableTokens) this.#written.add(prefix.chain);
    return { totalTokens, inputTokens: totalTokens - cacheReadTokens - cacheCreationTokens, cacheCreationTokens, cacheReadTokens };
  }

  /** Forgets every written prefix. */
  clear(): void {
    this.#written.clear();
  }
}
