import type { AgentApi } from './agent-api.ts';
import type { AgentRequest } from './agent-request.ts';
import { messageDigest } from './conversation.ts';

/**
 * A digest of what makes a conversation one agent's own, apart from its history: its system prompt (leading system
 * items, Responses `instructions`, Anthropic `system`) and its tools, without Anthropic's moving cache markers. The
 * same agent starting over (after compacting on its own, or with a new history) sends the same; a sub-agent on the
 * same session key is set up with a prompt and tools of its own.
 */
export function agentIdentity(api: AgentApi, req: AgentRequest): string {
  const unmarked = (value: unknown): unknown => (Array.isArray(value) ? api.canonical({ content: value })['content'] : (value ?? null));
  return messageDigest({
    system: req.system.map((item) => api.canonical(item)),
    instructions: req.body['instructions'] ?? null,
    systemField: unmarked(req.body['system']),
    tools: unmarked(req.tools),
  });
}
