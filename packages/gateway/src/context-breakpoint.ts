import type { AgentRequest } from './agent-request.ts';

const MAX_BREAKPOINTS = 4;

const marks = (v: unknown): number => {
  if (typeof v !== 'object' || v === null) return 0;
  const own = 'cache_control' in v ? 1 : 0;
  const content = (v as { content?: unknown }).content;
  return own + (Array.isArray(content) ? content.reduce((n: number, b) => n + marks(b), 0) : 0);
};

/**
 * An Anthropic request rewritten onto a rebuilt context, with a `cache_control` breakpoint on the context's last block
 * so the provider caches the rebuilt prefix that every later request repeats — when the agent's own breakpoints (on
 * its tools, system and newest messages) leave room for one within the four a request may carry.
 */
export function withContextBreakpoint(items: Record<string, unknown>[], contextLength: number, req: AgentRequest): Record<string, unknown>[] {
  const system = req.body['system'];
  const used = (req.tools ?? []).reduce((n: number, t) => n + marks(t), 0) + (Array.isArray(system) ? system.reduce((n: number, b) => n + marks(b), 0) : 0) + items.reduce((n, m) => n + marks(m), 0);
  const at = contextLength - 1;
  const last = items[at];
  if (used >= MAX_BREAKPOINTS || last === undefined) return items;
  const content = last['content'];
  const blocks: unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  const end = blocks.at(-1);
  if (typeof end !== 'object' || end === null) return items;
  const out = [...items];
  out[at] = { ...last, content: [...blocks.slice(0, -1), { ...end, cache_control: { type: 'ephemeral' } }] };
  return out;
}
