/** Most `cache_control` breakpoints one Anthropic request may carry. */
export const MAX_BREAKPOINTS = 4;

const EPHEMERAL = { type: 'ephemeral' } as const;

const hasBreakpoint = (block: unknown): boolean => typeof block === 'object' && block !== null && 'cache_control' in block;

const blocksOf = (message: Record<string, unknown>): unknown[] => {
  const content = message['content'];
  return typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
};

/** Breakpoints the agent put on its tools and system blocks (they stay where the agent put them). */
export function fixedBreakpoints(tools: readonly unknown[], system: unknown): number {
  const systemBlocks = Array.isArray(system) ? system : [];
  return tools.filter(hasBreakpoint).length + systemBlocks.filter(hasBreakpoint).length;
}

/**
 * The messages of a writer's Anthropic request with cache breakpoints where they pay: on block `block` of message
 * `at` (the end of the forked prefix, so the fork reads the agent's cached prefix and later calls read it too) and on
 * the last block of the last message (so each call of the writer reads the one before). Older message breakpoints go
 * first when the request would carry more than four; the provider keys its cache on the content, not on where the
 * markers sit, so moving them costs no cache hit. The input is not changed.
 */
export function placeBreakpoints(messages: readonly Record<string, unknown>[], at: { message: number; block: number }, fixed: number): Record<string, unknown>[] {
  const out = messages.map((m) => ({ ...m, content: blocksOf(m).map((b) => (typeof b === 'object' && b !== null ? { ...b } : b)) })) as (Record<string, unknown> & { content: Record<string, unknown>[] })[];
  const wanted: { message: number; block: number }[] = [at];
  const last = out.length - 1;
  const lastBlock = (out[last]?.content.length ?? 1) - 1;
  // Baton's first turn joins the forked prefix's last user turn when the prefix ends with one: the newest block is then
  // in the same message as the prefix's end, and still needs its own breakpoint.
  if (last >= 0 && (last !== at.message || lastBlock !== at.block)) wanted.push({ message: last, block: lastBlock });
  for (const w of wanted) {
    const block = out[w.message]?.content[w.block];
    if (block !== undefined) block['cache_control'] = EPHEMERAL;
  }
  const ours = new Set(wanted.map((w) => `${w.message}:${w.block}`));
  let total = fixed + out.reduce((n, m) => n + m.content.filter(hasBreakpoint).length, 0);
  for (let i = 0; i < out.length && total > MAX_BREAKPOINTS; i++) {
    const content = out[i]?.content ?? [];
    for (let j = 0; j < content.length && total > MAX_BREAKPOINTS; j++) {
      const block = content[j];
      if (block !== undefined && hasBreakpoint(block) && !ours.has(`${i}:${j}`)) {
        delete block['cache_control'];
        total--;
      }
    }
  }
  return out;
}
